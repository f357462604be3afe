//! The tasks extension through the proxy: which upstream session owns each task.
//!
//! A `tools/call` that declares the extension runs on a session that declares it upstream too;
//! when the upstream answers with a `CreateTaskResult`, its task id is recorded here with that
//! session and the downstream principal. `tasks/get`, `tasks/update` and `tasks/cancel` are
//! then forwarded to that session (for a stdio upstream each session is its own process, so no
//! other one knows the task). A task id that was never recorded, belongs to another principal,
//! or whose session is gone (lost, retired, closed by the pool) is answered like a missing task.
//! The map is bounded: past [`MAX_TASKS`] the oldest entries are forgotten.

use super::pool::Session;
use mcp::server::mcp_protocol::ProtocolError;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, Weak};

/// Most tasks the proxy routes at once.
pub const MAX_TASKS: usize = 4096;

/// Where one task lives.
struct Owner {
    session: Weak<Session>,
    principal: Option<String>,
}

#[derive(Default)]
struct Map {
    owners: HashMap<String, Owner>,
    /// Task ids, oldest first (for the bound).
    order: VecDeque<String>,
}

/// The task id -> session map (see the module docs).
pub struct Tasks {
    map: Mutex<Map>,
    cap: usize,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks").field("len", &self.len()).field("cap", &self.cap).finish()
    }
}

/// The spec's answer for a task that does not exist (the same for one of another principal,
/// or one whose session is gone, so existence never leaks).
pub fn not_found() -> ProtocolError {
    ProtocolError::invalid_params("Failed to retrieve task: Task not found")
}

impl Tasks {
    /// An empty map holding at most `cap` tasks.
    pub fn new(cap: usize) -> Self {
        Self { map: Mutex::default(), cap: cap.max(1) }
    }

    /// How many tasks are routed.
    pub fn len(&self) -> usize {
        self.map.lock().expect("tasks lock").owners.len()
    }

    /// Whether no task is routed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Records the task `result` created (when it is a `CreateTaskResult`) as `principal`'s,
    /// living on `session`.
    pub fn record(&self, result: &Value, session: &Weak<Session>, principal: Option<&str>) {
        if result.get("resultType").and_then(Value::as_str) != Some("task") {
            return;
        }
        let Some(id) = result.get("taskId").and_then(Value::as_str) else { return };
        let mut map = self.map.lock().expect("tasks lock");
        let owner = Owner { session: session.clone(), principal: principal.map(str::to_owned) };
        if map.owners.insert(id.to_owned(), owner).is_none() {
            map.order.push_back(id.to_owned());
        }
        while map.owners.len() > self.cap {
            let Some(oldest) = map.order.pop_front() else { break };
            map.owners.remove(&oldest);
        }
    }

    /// The live session that owns task `id` for `principal`, or the not-found error. A task
    /// whose session is gone is forgotten.
    pub fn route(&self, id: &str, principal: Option<&str>) -> Result<Arc<Session>, ProtocolError> {
        let mut map = self.map.lock().expect("tasks lock");
        let owner = map.owners.get(id).ok_or_else(not_found)?;
        if owner.principal.as_deref() != principal {
            return Err(not_found());
        }
        match owner.session.upgrade().filter(|s| s.is_live()) {
            Some(session) => {
                session.touch();
                Ok(session)
            }
            None => {
                map.owners.remove(id);
                map.order.retain(|t| t != id);
                Err(not_found())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn created(id: &str) -> Value {
        json!({ "resultType": "task", "taskId": id, "status": "working" })
    }

    #[test]
    fn only_created_tasks_are_recorded_and_gone_sessions_are_not_found() {
        let tasks = Tasks::new(2);
        let gone = Weak::new();
        tasks.record(&json!({ "content": [] }), &gone, None);
        assert!(tasks.is_empty());
        tasks.record(&created("a"), &gone, Some("alice"));
        assert_eq!(tasks.len(), 1);
        // Another principal and a missing id get the same answer as a dead session.
        for (id, who) in [("a", Some("bob")), ("zzz", Some("alice")), ("a", Some("alice"))] {
            assert_eq!(tasks.route(id, who).unwrap_err().to_string(), not_found().to_string());
        }
        assert!(tasks.is_empty(), "a task whose session is gone is forgotten");
    }

    #[test]
    fn the_map_is_bounded() {
        let tasks = Tasks::new(2);
        for id in ["a", "b", "c"] {
            tasks.record(&created(id), &Weak::new(), None);
        }
        assert_eq!(tasks.len(), 2);
        let map = tasks.map.lock().unwrap();
        assert!(!map.owners.contains_key("a") && map.owners.contains_key("c"));
    }
}
