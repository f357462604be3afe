//! The accept loop's connection table and limits.

use super::drain::Activity;
use super::*;

const LOCAL: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

fn evicted(c: &Conn) -> bool {
    c.evicted.load(Ordering::Acquire)
}

#[test]
fn at_a_tie_the_connection_accepted_first_gives_way() {
    let table = Table::new(100, 0);
    let conns: Vec<_> = (1..=50).map(|id| table.insert(id, LOCAL)).collect();
    assert!(!table.evict_one(), "a new connection (its first request maybe unread) is not taken");
    // Every connection became idle at the same instant (a coarse clock would do this).
    for c in &conns {
        c.idle_since.store(7, Ordering::Relaxed);
    }
    conns[0].idle_since.store(8, Ordering::Relaxed);
    assert!(table.evict_one());
    assert!(evicted(&conns[1]), "the second accepted is the oldest idle one");
    assert!(conns.iter().enumerate().all(|(i, c)| i == 1 || !evicted(c)));
    assert_eq!(table.closing(), 1);
    assert!(table.evict_one());
    assert!(evicted(&conns[2]), "then the third");
    table.remove(&conns[1]);
    assert_eq!(table.closing(), 1);
}

#[test]
fn an_unfinished_head_gives_way_like_an_idle_connection_and_a_stream_last() {
    let table = Table::new(100, 0);
    let (busy, stream, head) = (table.insert(1, LOCAL), table.insert(2, LOCAL), table.insert(3, LOCAL));
    for c in [&busy, &stream, &head] {
        c.idle_since.store(0, Ordering::Relaxed);
    }
    busy.in_flight.store(1, Ordering::Release);
    stream.in_flight.store(1, Ordering::Release);
    table.open_stream(&stream, None);
    head.head_since.store(1, Ordering::Release);
    assert!(table.evict_one());
    assert!(evicted(&head), "the connection with an unfinished head goes first");
    assert!(table.evict_one());
    assert!(evicted(&stream), "then the listen stream");
    assert_eq!(stream.listen_since.load(Ordering::Acquire), 0, "its stream is ended");
    assert_eq!(table.lock().listening, 0);
    assert!(!table.evict_one(), "a connection busy with a request is never taken");
    assert!(!evicted(&busy));
}

#[test]
fn past_a_listen_cap_the_oldest_stream_gives_way() {
    let table = Table::new(3, 2);
    let a: IpAddr = "10.0.0.1".parse().unwrap();
    let b: IpAddr = "10.0.0.2".parse().unwrap();
    let conns: Vec<_> = [a, a, b, a, b, b].iter().enumerate().map(|(i, p)| table.insert(i as u64 + 1, *p)).collect();
    table.open_stream(&conns[0], None);
    table.open_stream(&conns[1], None);
    assert!(conns.iter().all(|c| !evicted(c)));
    // A third of peer a: its own oldest gives way, not b's.
    table.open_stream(&conns[3], None);
    assert!(evicted(&conns[0]));
    table.open_stream(&conns[2], None);
    table.open_stream(&conns[4], None);
    // Four open, cap 3: the oldest of all (conns[1]) gives way.
    assert!(evicted(&conns[1]));
    assert!(!evicted(&conns[2]) && !evicted(&conns[3]) && !evicted(&conns[4]));
    assert_eq!(table.lock().listening, 3);
    // A stream that ends on its own gives its place back.
    table.close_stream(&conns[4]);
    table.open_stream(&conns[5], None);
    assert!(!evicted(&conns[2]) && !evicted(&conns[3]));
    let g = table.lock();
    assert_eq!((g.listening, g.per_peer[&StreamKey::Peer(a)], g.per_peer[&StreamKey::Peer(b)]), (3, 1, 2));
}

#[test]
fn authenticated_streams_are_capped_per_principal_not_per_address() {
    let table = Table::new(100, 2);
    // Many users behind one address (a reverse proxy): each has a share of its own.
    let conns: Vec<_> = (0..5).map(|i| table.insert(i + 1, LOCAL)).collect();
    let (alice, bob): (Arc<str>, Arc<str>) = ("alice".into(), "bob".into());
    table.open_stream(&conns[0], Some(alice.clone()));
    table.open_stream(&conns[1], Some(alice.clone()));
    table.open_stream(&conns[2], Some(bob.clone()));
    table.open_stream(&conns[3], Some(bob.clone()));
    assert!(conns.iter().all(|c| !evicted(c)), "two each, from one address, fit");
    // Alice's third: her own oldest gives way, none of Bob's.
    table.open_stream(&conns[4], Some(alice));
    assert!(evicted(&conns[0]));
    assert!(!evicted(&conns[2]) && !evicted(&conns[3]));
    let g = table.lock();
    assert_eq!(g.per_peer[&StreamKey::Principal(bob)], 2);
    assert!(!g.per_peer.contains_key(&StreamKey::Peer(LOCAL)));
}

#[test]
fn the_connection_cap_stays_below_the_fd_limit() {
    assert_eq!(clamp_to_fd_limit(4096, None), 4096);
    assert_eq!(clamp_to_fd_limit(4096, Some(1024)), 960);
    assert_eq!(clamp_to_fd_limit(4096, Some(1 << 20)), 4096);
    assert_eq!(clamp_to_fd_limit(4096, Some(100)), 50);
    assert_eq!(clamp_to_fd_limit(4096, Some(1)), 1);
    assert_eq!(listen_cap(2048, 960), 480);
    assert_eq!(listen_cap(2048, 8), 4);
    assert_eq!(listen_cap(2048, 1), 1);
}

#[test]
fn the_accept_log_says_once_a_second_how_many_it_left_out() {
    let mut log = RateLimited { last: None, suppressed: 0 };
    let t = Instant::now();
    assert_eq!(log.allow(t), Some(0));
    for i in 1..100 {
        assert_eq!(log.allow(t + Duration::from_millis(i * 10 - 5)), None);
    }
    assert_eq!(log.allow(t + Duration::from_secs(1)), Some(99));
}

#[test]
fn a_drain_is_busy_while_a_request_is_in_flight_or_a_head_arrives() {
    let table = Table::new(100, 0);
    let header = Duration::from_secs(30);
    assert_eq!(table.activity(0, header), Activity::None, "no connection: nothing to wait for");
    let (a, b) = (table.insert(1, LOCAL), table.insert(2, LOCAL));
    a.idle_since.store(5, Ordering::Relaxed);
    b.idle_since.store(9, Ordering::Relaxed);
    assert_eq!(table.activity(10, header), Activity::IdleSince(9), "quiet since the last one became idle");
    a.in_flight.store(1, Ordering::Release);
    assert_eq!(table.activity(10, header), Activity::Busy);
    a.in_flight.store(0, Ordering::Release);
    // A head arriving on b: busy until it is older than the header timeout.
    b.head_since.store(11, Ordering::Release);
    assert_eq!(table.activity(20, header), Activity::Busy);
    let stale = 10 + header.as_nanos() as u64;
    assert_eq!(table.activity(stale, header), Activity::IdleSince(9));
    table.remove(&a);
    table.remove(&b);
    assert_eq!(table.activity(stale, header), Activity::None);
}
