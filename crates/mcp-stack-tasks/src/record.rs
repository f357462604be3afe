//! A task's durable record and its state machine, with no IO: every store applies the same
//! [`TaskChange`]s through [`TaskRecord::apply`], so the rules (terminal states never change,
//! input keys are never reused, partial answers keep the rest outstanding) live in one place.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// Where a task is in its life (`Task.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskStatus {
    /// The work is running.
    Working,
    /// The work waits for answers to its `inputRequests` (`tasks/update`).
    InputRequired,
    /// The request produced a result (tool errors included).
    Completed,
    /// The request ended with a JSON-RPC error.
    Failed,
    /// The task was cancelled before it finished.
    Cancelled,
}

impl TaskStatus {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Whether the status is final (`completed`, `failed`, `cancelled`).
    pub fn is_terminal(self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled)
    }
}

/// How a task ended: the three terminal statuses of the tasks extension (exhaustive, so that
/// a server can match every end).
#[derive(Debug, Clone, PartialEq)]
pub enum Terminal {
    /// The result the request would have returned (a `CallToolResult`).
    Completed(Value),
    /// A JSON-RPC error object `{code, message, data?}`.
    Failed(Value),
    /// Cancelled (by `tasks/cancel`, expiry or shutdown).
    Cancelled,
}

/// One atomic change to a task; see [`TaskRecord::apply`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TaskChange {
    /// The work asks for input: the task parks in `input_required` with these requests.
    Park(Map<String, Value>),
    /// `tasks/update`: answers for (some of) the outstanding keys.
    Answer(Map<String, Value>),
    /// The worker takes the answers collected so far (to run its next round).
    TakeAnswers,
    /// A new `statusMessage`.
    Message(String),
    /// The work ended.
    Finish(Terminal),
    /// `tasks/cancel`.
    Cancel,
}

/// What applying a [`TaskChange`] did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Applied {
    /// The record changed.
    Changed,
    /// Nothing to do (e.g. the task is already terminal, or no answered key was outstanding).
    Unchanged,
    /// The answers taken by [`TaskChange::TakeAnswers`].
    Answers(Map<String, Value>),
    /// [`TaskChange::Park`] asked again for a key this task already used.
    KeyReused(String),
}

/// A task as a store keeps it. Serializable, so a shared store can hold it as JSON; every
/// field read back from a shared store is validated like client input before use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// The task id (at least 128 random bits).
    pub task_id: String,
    /// The principal that created it (`None`: the anonymous bucket).
    pub owner: Option<String>,
    /// Current status.
    pub status: TaskStatus,
    /// `statusMessage`.
    pub status_message: Option<String>,
    /// Creation time, ms since the Unix epoch.
    pub created_at_ms: u64,
    /// Last change, ms since the Unix epoch.
    pub updated_at_ms: u64,
    /// Lifetime from creation (`None`: unlimited).
    pub ttl_ms: Option<u64>,
    /// Suggested polling interval.
    pub poll_interval_ms: u64,
    /// Outstanding input requests (`input_required` only).
    pub input_requests: Map<String, Value>,
    /// Answers received and not yet taken by the worker.
    pub answers: Map<String, Value>,
    /// Every input key ever issued (keys are never reused).
    pub used_keys: Vec<String>,
    /// The result (`completed` only).
    pub result: Option<Value>,
    /// The error object (`failed` only).
    pub error: Option<Value>,
    /// `tasks/cancel` was received while the work was running.
    pub cancel_requested: bool,
    /// Bumped by every change (wake-ups and compare-and-set).
    pub revision: u64,
}

impl TaskRecord {
    /// A new `working` task.
    pub fn new(task_id: String, owner: Option<String>, now_ms: u64, ttl_ms: Option<u64>, poll_ms: u64) -> Self {
        Self {
            task_id,
            owner,
            status: TaskStatus::Working,
            status_message: None,
            created_at_ms: now_ms,
            updated_at_ms: now_ms,
            ttl_ms,
            poll_interval_ms: poll_ms,
            input_requests: Map::new(),
            answers: Map::new(),
            used_keys: Vec::new(),
            result: None,
            error: None,
            cancel_requested: false,
            revision: 0,
        }
    }

    /// Whether the task outlived its TTL at `now_ms` (never before `createdAt + ttlMs`).
    pub fn is_expired(&self, now_ms: u64) -> bool {
        self.ttl_ms.is_some_and(|ttl| now_ms >= self.created_at_ms.saturating_add(ttl))
    }

    /// Whether `principal` may see this task.
    pub fn is_owned_by(&self, principal: Option<&str>) -> bool {
        self.owner.as_deref() == principal
    }

    /// Applies one change at `now_ms`, following the SEP's transitions.
    pub fn apply(&mut self, change: TaskChange, now_ms: u64) -> Applied {
        if self.status.is_terminal() {
            return Applied::Unchanged;
        }
        let applied = match change {
            TaskChange::Park(requests) => {
                if let Some(k) = requests.keys().find(|k| self.used_keys.contains(k)) {
                    return Applied::KeyReused(k.clone());
                }
                if requests.is_empty() {
                    return Applied::Unchanged;
                }
                self.used_keys.extend(requests.keys().cloned());
                self.input_requests = requests;
                self.status = TaskStatus::InputRequired;
                Applied::Changed
            }
            TaskChange::Answer(responses) => {
                let mut any = false;
                for (k, v) in responses {
                    if self.input_requests.remove(&k).is_some() {
                        self.answers.insert(k, v);
                        any = true;
                    }
                }
                if !any {
                    return Applied::Unchanged;
                }
                if self.input_requests.is_empty() {
                    self.status = TaskStatus::Working;
                }
                Applied::Changed
            }
            TaskChange::TakeAnswers => {
                let answers = std::mem::take(&mut self.answers);
                self.touch(now_ms);
                return Applied::Answers(answers);
            }
            TaskChange::Message(m) => {
                self.status_message = Some(m);
                Applied::Changed
            }
            TaskChange::Finish(end) => {
                self.input_requests.clear();
                self.answers.clear();
                match end {
                    Terminal::Completed(v) => {
                        self.status = TaskStatus::Completed;
                        self.result = Some(v);
                    }
                    Terminal::Failed(e) => {
                        self.status = TaskStatus::Failed;
                        let message = e.get("message").and_then(Value::as_str).unwrap_or("the task failed");
                        self.status_message = Some(message.to_owned());
                        self.error = Some(e);
                    }
                    Terminal::Cancelled => {
                        self.status = TaskStatus::Cancelled;
                        self.status_message = Some("cancelled".into());
                    }
                }
                Applied::Changed
            }
            TaskChange::Cancel => {
                if self.status == TaskStatus::InputRequired {
                    // Nothing is running: the task ends now.
                    self.input_requests.clear();
                    self.answers.clear();
                    self.status = TaskStatus::Cancelled;
                    self.status_message = Some("cancelled".into());
                } else if self.cancel_requested {
                    return Applied::Unchanged;
                } else {
                    self.cancel_requested = true;
                }
                Applied::Changed
            }
        };
        self.touch(now_ms);
        applied
    }

    fn touch(&mut self, now_ms: u64) {
        self.updated_at_ms = self.updated_at_ms.max(now_ms);
        self.revision += 1;
    }

    /// The `Task` fields every task shape shares.
    fn base(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("taskId".into(), json!(self.task_id));
        m.insert("status".into(), json!(self.status.as_str()));
        if let Some(msg) = &self.status_message {
            m.insert("statusMessage".into(), json!(msg));
        }
        m.insert("createdAt".into(), json!(iso8601(self.created_at_ms)));
        m.insert("lastUpdatedAt".into(), json!(iso8601(self.updated_at_ms)));
        m.insert("ttlMs".into(), json!(self.ttl_ms));
        m.insert("pollIntervalMs".into(), json!(self.poll_interval_ms.max(1)));
        m
    }

    /// The `CreateTaskResult` (`resultType: "task"`, no status-specific fields).
    pub fn create_result(&self) -> Value {
        let mut m = self.base();
        m.insert("resultType".into(), json!("task"));
        Value::Object(m)
    }

    /// The `DetailedTask`: the base fields plus `inputRequests`, `result` or `error` by status.
    pub fn detailed(&self) -> Map<String, Value> {
        let mut m = self.base();
        match self.status {
            TaskStatus::InputRequired => {
                m.insert("inputRequests".into(), Value::Object(self.input_requests.clone()));
            }
            TaskStatus::Completed => {
                m.insert("result".into(), self.result.clone().unwrap_or_else(|| json!({})));
            }
            TaskStatus::Failed => {
                let fallback = || json!({ "code": -32603, "message": "the task failed" });
                m.insert("error".into(), self.error.clone().unwrap_or_else(fallback));
            }
            TaskStatus::Working | TaskStatus::Cancelled => {}
        }
        m
    }
}

/// `ms` since the Unix epoch as RFC 3339 UTC with milliseconds (`2026-12-01T14:27:11.000Z`).
pub fn iso8601(ms: u64) -> String {
    let (secs, millis) = (ms / 1000, ms % 1000);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z", rem / 3600, (rem % 3600) / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task() -> TaskRecord {
        TaskRecord::new("t".into(), None, 1_000, Some(60_000), 500)
    }

    #[test]
    fn timestamps_are_rfc3339_utc() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(iso8601(1_796_135_231_000), "2026-12-01T14:27:11.000Z");
    }

    #[test]
    fn partial_answers_keep_the_rest_outstanding_and_keys_are_never_reused() {
        let mut t = task();
        let asks: Map<String, Value> =
            serde_json::from_value(json!({"a": {"method": "m"}, "b": {"method": "m"}})).unwrap();
        assert_eq!(t.apply(TaskChange::Park(asks.clone()), 2_000), Applied::Changed);
        let one = serde_json::from_value(json!({"a": 1, "never-asked": 2})).unwrap();
        assert_eq!(t.apply(TaskChange::Answer(one), 2_100), Applied::Changed);
        assert_eq!(t.status, TaskStatus::InputRequired);
        assert!(t.detailed()["inputRequests"].get("a").is_none());
        assert!(t.detailed()["inputRequests"].get("b").is_some());
        let again = serde_json::from_value(json!({"a": 3})).unwrap();
        assert_eq!(t.apply(TaskChange::Answer(again), 2_200), Applied::Unchanged);
        let rest = serde_json::from_value(json!({"b": 4})).unwrap();
        t.apply(TaskChange::Answer(rest), 2_300);
        assert_eq!(t.status, TaskStatus::Working);
        let Applied::Answers(got) = t.apply(TaskChange::TakeAnswers, 2_400) else { panic!() };
        assert_eq!(Value::Object(got), json!({"a": 1, "b": 4}));
        assert_eq!(t.apply(TaskChange::Park(asks), 2_500), Applied::KeyReused("a".into()));
    }

    #[test]
    fn terminal_states_never_change_and_cancel_is_cooperative_while_working() {
        let mut t = task();
        assert_eq!(t.apply(TaskChange::Cancel, 2_000), Applied::Changed);
        assert_eq!(t.status, TaskStatus::Working);
        assert!(t.cancel_requested);
        t.apply(TaskChange::Finish(Terminal::Cancelled), 2_100);
        assert_eq!(t.status, TaskStatus::Cancelled);
        let done = TaskChange::Finish(Terminal::Completed(json!({"content": []})));
        assert_eq!(t.apply(done, 2_200), Applied::Unchanged);
        assert_eq!(t.apply(TaskChange::Cancel, 2_300), Applied::Unchanged);
        assert_eq!(t.status, TaskStatus::Cancelled);
        assert!(t.result.is_none());
    }

    #[test]
    fn wire_shapes_follow_the_status() {
        let mut t = task();
        let created = t.create_result();
        assert_eq!(created["resultType"], "task");
        assert_eq!(created["ttlMs"], 60_000);
        assert_eq!(created["pollIntervalMs"], 500);
        for k in ["result", "error", "inputRequests", "requestState", "ttl", "pollInterval"] {
            assert!(created.get(k).is_none(), "{k}");
        }
        t.apply(TaskChange::Finish(Terminal::Failed(json!({"code": -32603, "message": "boom"}))), 3_000);
        let d = t.detailed();
        assert_eq!(d["error"]["code"], -32603);
        assert_eq!(d["statusMessage"], "boom");
        assert!(d.get("result").is_none());
        assert_eq!(d["lastUpdatedAt"], "1970-01-01T00:00:03.000Z");
        let unlimited = TaskRecord::new("u".into(), None, 0, None, 1);
        assert!(unlimited.detailed()["ttlMs"].is_null());
        assert!(!unlimited.is_expired(u64::MAX));
        assert!(task().is_expired(61_000) && !task().is_expired(60_999));
    }
}
