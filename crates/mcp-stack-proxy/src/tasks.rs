//! The tasks extension through the proxy: which upstream session owns each task.
//!
//! A `tools/call` that declares the extension runs on a session that declares it upstream too;
//! when the upstream answers with a `CreateTaskResult`, the proxy issues its own task id
//! (128 random bits, hex) and records it with that session, the upstream's id and the
//! downstream principal. The downstream only ever sees the proxy's id: it replaces `taskId` in
//! the `CreateTaskResult` and in every `tasks/*` result, and the upstream's id replaces it in
//! the params of `tasks/*` before they are sent to the owning session. Upstream ids are only
//! unique per session (for a stdio upstream each session is its own process, and sequential
//! ids are common), so two sessions may hand out the same one without a collision here.
//!
//! A task id that was never issued, belongs to another principal, or whose session is gone
//! (lost, retired, closed by the pool) is answered like a missing task: with the session, the
//! task is gone (a stdio process takes its tasks with it). The map is bounded: each principal
//! keeps at most [`MAX_TASKS_PER_PRINCIPAL`] (its oldest forgotten first, nobody else's), and
//! all of them together at most [`MAX_TASKS`] (the oldest forgotten first).

use super::pool::Session;
use mcp::server::mcp_protocol::ProtocolError;
use parking_lot::Mutex;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Weak};

/// Most tasks the proxy routes at once.
pub(crate) const MAX_TASKS: usize = 4096;

/// Most tasks the proxy routes at once for one principal.
pub(crate) const MAX_TASKS_PER_PRINCIPAL: usize = 1024;

/// What owns tasks: an upstream session (a fake one in the unit tests).
pub(crate) trait Host {
    /// Whether the session is still in service.
    fn is_live(&self) -> bool;
    /// Marks the session used now (so the idle sweep keeps it while its tasks are polled).
    fn touch(&self);
}

impl Host for Session {
    fn is_live(&self) -> bool {
        Session::is_live(self)
    }

    fn touch(&self) {
        Session::touch(self)
    }
}

/// Where one task lives.
struct Owner<S> {
    session: Weak<S>,
    /// The id the owning session knows the task by.
    upstream: String,
    principal: Option<String>,
    /// When it was recorded (the key of the age orders).
    seq: u64,
}

struct Map<S> {
    /// Proxy-issued id -> owner.
    owners: HashMap<String, Owner<S>>,
    /// Proxy ids by age, oldest first (for the global bound).
    order: BTreeMap<u64, String>,
    /// Each principal's proxy ids by age (for the per-principal bound).
    mine: HashMap<Option<String>, BTreeMap<u64, String>>,
    next: u64,
}

impl<S> Default for Map<S> {
    fn default() -> Self {
        Self { owners: HashMap::new(), order: BTreeMap::new(), mine: HashMap::new(), next: 0 }
    }
}

impl<S> Map<S> {
    fn insert(&mut self, id: String, mut owner: Owner<S>) {
        owner.seq = self.next;
        self.next += 1;
        self.order.insert(owner.seq, id.clone());
        self.mine.entry(owner.principal.clone()).or_default().insert(owner.seq, id.clone());
        self.owners.insert(id, owner);
    }

    fn remove(&mut self, id: &str) {
        let Some(owner) = self.owners.remove(id) else { return };
        self.order.remove(&owner.seq);
        if let Some(mine) = self.mine.get_mut(&owner.principal) {
            mine.remove(&owner.seq);
            if mine.is_empty() {
                self.mine.remove(&owner.principal);
            }
        }
    }

    /// Forgets `principal`'s oldest tasks past `per_principal`, then anyone's past `cap`.
    fn bound(&mut self, principal: &Option<String>, per_principal: usize, cap: usize) {
        while self.mine.get(principal).is_some_and(|m| m.len() > per_principal) {
            let Some(oldest) = self.mine.get(principal).and_then(|m| m.values().next().cloned()) else { break };
            self.remove(&oldest);
        }
        while self.owners.len() > cap {
            let Some(oldest) = self.order.values().next().cloned() else { break };
            self.remove(&oldest);
        }
    }
}

/// The proxy task id -> (session, upstream id, principal) map (see the module docs).
pub(crate) struct Tasks<S = Session> {
    map: Mutex<Map<S>>,
    cap: usize,
    per_principal: usize,
}

impl<S: Host> std::fmt::Debug for Tasks<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("len", &self.len())
            .field("cap", &self.cap)
            .field("per_principal", &self.per_principal)
            .finish()
    }
}

/// A task's route: the live session that owns it and the id that session knows it by.
#[derive(Debug)]
pub(crate) struct Route<S = Session> {
    /// The owning session (touched when routed, so the idle sweep keeps it).
    pub(crate) session: Arc<S>,
    /// The upstream's task id (what the session's server knows).
    pub(crate) upstream_id: String,
}

/// The spec's answer for a task that does not exist (the same for one of another principal,
/// or one whose session is gone, so existence never leaks).
pub(crate) fn not_found() -> ProtocolError {
    ProtocolError::invalid_params("Failed to retrieve task: Task not found")
}

/// A fresh proxy task id: 128 random bits, hex.
fn fresh_id() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// An upstream result as the downstream gets it: its `taskId` (when it has one) set to proxy
/// task `id` (an ack without one stays as it is).
pub(crate) fn outward(mut v: Value, id: &str) -> Value {
    if let Some(t) = v.as_object_mut().and_then(|o| o.get_mut("taskId")) {
        *t = json!(id);
    }
    v
}

impl<S: Host> Tasks<S> {
    /// An empty map holding at most `cap` tasks, at most [`MAX_TASKS_PER_PRINCIPAL`] (or `cap`)
    /// of one principal.
    pub(crate) fn new(cap: usize) -> Self {
        let cap = cap.max(1);
        Self { map: Mutex::default(), cap, per_principal: MAX_TASKS_PER_PRINCIPAL.min(cap) }
    }

    /// The same map with at most `n` tasks of one principal.
    #[cfg(test)]
    fn per_principal(mut self, n: usize) -> Self {
        self.per_principal = n.max(1);
        self
    }

    /// How many tasks are routed.
    pub(crate) fn len(&self) -> usize {
        self.map.lock().owners.len()
    }

    /// When `result` is a `CreateTaskResult`: records its task as `principal`'s, living on
    /// `session`, under a fresh proxy id, and returns the result naming that id. Any other
    /// result is returned as it is.
    pub(crate) fn record(&self, result: Value, session: &Weak<S>, principal: Option<&str>) -> Value {
        if result.get("resultType").and_then(Value::as_str) != Some("task") {
            return result;
        }
        let Some(upstream) = result.get("taskId").and_then(Value::as_str).map(str::to_owned) else { return result };
        let id = fresh_id();
        let principal = principal.map(str::to_owned);
        let mut map = self.map.lock();
        let owner = Owner { session: session.clone(), upstream, principal: principal.clone(), seq: 0 };
        map.insert(id.clone(), owner);
        map.bound(&principal, self.per_principal, self.cap);
        drop(map);
        outward(result, &id)
    }

    /// The route of proxy task `id` for `principal`, or the not-found error. A task whose
    /// session is gone is forgotten.
    pub(crate) fn route(&self, id: &str, principal: Option<&str>) -> Result<Route<S>, ProtocolError> {
        let mut map = self.map.lock();
        let owner = map.owners.get(id).ok_or_else(not_found)?;
        if owner.principal.as_deref() != principal {
            return Err(not_found());
        }
        match owner.session.upgrade().filter(|s| s.is_live()) {
            Some(session) => {
                session.touch();
                Ok(Route { session, upstream_id: owner.upstream.clone() })
            }
            None => {
                map.remove(id);
                Err(not_found())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    /// A stand-in for an upstream session.
    #[derive(Debug, Default)]
    struct Fake {
        dead: AtomicBool,
        touched: AtomicUsize,
    }

    impl Host for Fake {
        fn is_live(&self) -> bool {
            !self.dead.load(Ordering::Relaxed)
        }

        fn touch(&self) {
            self.touched.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn created(id: &str) -> Value {
        json!({ "resultType": "task", "taskId": id, "status": "working" })
    }

    /// Records a task upstream-numbered `upstream` and returns its proxy id.
    fn issue(tasks: &Tasks<Fake>, upstream: &str, on: &Arc<Fake>, who: Option<&str>) -> String {
        let out = tasks.record(created(upstream), &Arc::downgrade(on), who);
        out["taskId"].as_str().unwrap().to_owned()
    }

    fn is_not_found<T: std::fmt::Debug>(r: Result<T, ProtocolError>) -> bool {
        r.unwrap_err().to_string() == not_found().to_string()
    }

    #[test]
    fn created_tasks_get_proxy_ids_and_other_results_pass_through() {
        let tasks = Tasks::<Fake>::new(8);
        let done = json!({ "content": [], "taskId": "not-a-task" });
        assert_eq!(tasks.record(done.clone(), &Weak::new(), None), done);
        assert!(tasks.len() == 0);
        let s = Arc::new(Fake::default());
        let out = tasks.record(created("1"), &Arc::downgrade(&s), None);
        let id = out["taskId"].as_str().unwrap();
        assert_eq!(id.len(), 32, "128 random bits, hex: {id}");
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()) && id != "1");
        assert_eq!((out["resultType"].clone(), out["status"].clone()), (json!("task"), json!("working")));
        assert_eq!(outward(json!({ "taskId": "1", "status": "completed" }), id)["taskId"], id);
        assert_eq!(outward(json!({}), id), json!({}), "an ack stays empty");
    }

    #[test]
    fn the_same_upstream_id_on_two_sessions_does_not_collide() {
        let tasks = Tasks::<Fake>::new(8);
        let (one, two) = (Arc::new(Fake::default()), Arc::new(Fake::default()));
        let a = issue(&tasks, "1", &one, Some("alice"));
        let b = issue(&tasks, "1", &two, Some("alice"));
        assert_ne!(a, b);
        assert_eq!(tasks.len(), 2);
        let (ra, rb) = (tasks.route(&a, Some("alice")).unwrap(), tasks.route(&b, Some("alice")).unwrap());
        assert!(Arc::ptr_eq(&ra.session, &one) && Arc::ptr_eq(&rb.session, &two));
        assert_eq!((ra.upstream_id.as_str(), rb.upstream_id.as_str()), ("1", "1"));
        assert_eq!(one.touched.load(Ordering::Relaxed), 1, "routing touches the owner");
        assert!(is_not_found(tasks.route("1", Some("alice"))), "the upstream's own id is not one of ours");
    }

    #[test]
    fn another_principals_task_and_a_gone_session_are_not_found() {
        let tasks = Tasks::<Fake>::new(8);
        let s = Arc::new(Fake::default());
        let id = issue(&tasks, "t", &s, Some("alice"));
        for who in [Some("bob"), None] {
            assert!(is_not_found(tasks.route(&id, who)), "{who:?}");
        }
        assert!(is_not_found(tasks.route("zzz", Some("alice"))));
        assert_eq!(s.touched.load(Ordering::Relaxed), 0, "a refused route touches nothing");
        s.dead.store(true, Ordering::Relaxed);
        assert!(is_not_found(tasks.route(&id, Some("alice"))));
        assert!(tasks.len() == 0, "a task whose session is gone is forgotten");
        let gone = issue(&tasks, "t", &Arc::new(Fake::default()), None);
        assert!(is_not_found(tasks.route(&gone, None)), "a dropped session");
        assert!(tasks.len() == 0);
    }

    #[test]
    fn the_per_principal_cap_drops_only_that_principals_oldest() {
        let tasks = Tasks::<Fake>::new(100).per_principal(2);
        let s = Arc::new(Fake::default());
        let bob = issue(&tasks, "b", &s, Some("bob"));
        let alice: Vec<String> = (0..3).map(|i| issue(&tasks, &i.to_string(), &s, Some("alice"))).collect();
        assert_eq!(tasks.len(), 3);
        assert!(is_not_found(tasks.route(&alice[0], Some("alice"))), "alice's oldest is forgotten");
        for id in &alice[1..] {
            tasks.route(id, Some("alice")).unwrap();
        }
        assert_eq!(tasks.route(&bob, Some("bob")).unwrap().upstream_id, "b", "bob keeps his older task");
    }

    #[test]
    fn the_map_is_bounded_oldest_first() {
        let tasks = Tasks::<Fake>::new(2);
        let s = Arc::new(Fake::default());
        let ids: Vec<String> = ["a", "b", "c"].iter().map(|u| issue(&tasks, u, &s, Some(u))).collect();
        assert_eq!(tasks.len(), 2);
        assert!(is_not_found(tasks.route(&ids[0], Some("a"))));
        assert_eq!(tasks.route(&ids[2], Some("c")).unwrap().upstream_id, "c");
        let map = tasks.map.lock();
        assert_eq!((map.order.len(), map.mine.len()), (2, 2), "both orders forget it too");
    }
}
