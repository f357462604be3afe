//! The request methods a 2026-07-28 server serves: one table of their properties (which accept
//! MRTR `inputResponses`, which parameter `Mcp-Name` mirrors), used by server, HTTP transport
//! and client alike.

/// A request method of revision 2026-07-28 that servers serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Method {
    /// `server/discover`
    Discover,
    /// `tools/list`
    ToolsList,
    /// `tools/call`
    ToolsCall,
    /// `resources/list`
    ResourcesList,
    /// `resources/read`
    ResourcesRead,
    /// `resources/templates/list`
    ResourceTemplatesList,
    /// `prompts/list`
    PromptsList,
    /// `prompts/get`
    PromptsGet,
    /// `completion/complete`
    Complete,
    /// `subscriptions/listen`
    SubscriptionsListen,
    /// `tasks/get` (the tasks extension)
    TasksGet,
    /// `tasks/update` (the tasks extension)
    TasksUpdate,
    /// `tasks/cancel` (the tasks extension)
    TasksCancel,
    /// `skills/list` (the skills extension)
    SkillsList,
    /// `skills/get` (the skills extension)
    SkillsGet,
    /// `resources/directory/read` (the skills extension's `directoryRead`)
    ResourcesDirectoryRead,
}

impl Method {
    /// Every method, in the order of the spec's server features.
    pub const ALL: [Method; 16] = [
        Method::Discover,
        Method::ToolsList,
        Method::ToolsCall,
        Method::ResourcesList,
        Method::ResourcesRead,
        Method::ResourceTemplatesList,
        Method::PromptsList,
        Method::PromptsGet,
        Method::Complete,
        Method::SubscriptionsListen,
        Method::TasksGet,
        Method::TasksUpdate,
        Method::TasksCancel,
        Method::SkillsList,
        Method::SkillsGet,
        Method::ResourcesDirectoryRead,
    ];

    /// The method named `name`, if it is one of these.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "server/discover" => Method::Discover,
            "tools/list" => Method::ToolsList,
            "tools/call" => Method::ToolsCall,
            "resources/list" => Method::ResourcesList,
            "resources/read" => Method::ResourcesRead,
            "resources/templates/list" => Method::ResourceTemplatesList,
            "prompts/list" => Method::PromptsList,
            "prompts/get" => Method::PromptsGet,
            "completion/complete" => Method::Complete,
            "subscriptions/listen" => Method::SubscriptionsListen,
            "tasks/get" => Method::TasksGet,
            "tasks/update" => Method::TasksUpdate,
            "tasks/cancel" => Method::TasksCancel,
            "skills/list" => Method::SkillsList,
            "skills/get" => Method::SkillsGet,
            "resources/directory/read" => Method::ResourcesDirectoryRead,
            _ => return None,
        })
    }

    /// Whether the method belongs to the tasks extension (`io.modelcontextprotocol/tasks`):
    /// only a request declaring the extension may call it.
    pub fn is_task_method(self) -> bool {
        matches!(self, Method::TasksGet | Method::TasksUpdate | Method::TasksCancel)
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Discover => "server/discover",
            Method::ToolsList => "tools/list",
            Method::ToolsCall => "tools/call",
            Method::ResourcesList => "resources/list",
            Method::ResourcesRead => "resources/read",
            Method::ResourceTemplatesList => "resources/templates/list",
            Method::PromptsList => "prompts/list",
            Method::PromptsGet => "prompts/get",
            Method::Complete => "completion/complete",
            Method::SubscriptionsListen => "subscriptions/listen",
            Method::TasksGet => "tasks/get",
            Method::TasksUpdate => "tasks/update",
            Method::TasksCancel => "tasks/cancel",
            Method::SkillsList => "skills/list",
            Method::SkillsGet => "skills/get",
            Method::ResourcesDirectoryRead => "resources/directory/read",
        }
    }

    /// Whether the method may answer `input_required` (and so accepts `inputResponses` and
    /// `requestState` on the retry).
    pub fn accepts_input_responses(self) -> bool {
        matches!(self, Method::ToolsCall | Method::PromptsGet | Method::ResourcesRead)
    }

    /// The request parameter the `Mcp-Name` header mirrors, if the method has one.
    pub fn name_param(self) -> Option<&'static str> {
        match self {
            Method::ToolsCall | Method::PromptsGet => Some("name"),
            Method::ResourcesRead => Some("uri"),
            Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => Some("taskId"),
            _ => None,
        }
    }
}

/// The names of the messages a server takes that are not [`Method`]s: the client's
/// notifications, and the legacy handshake.
pub mod names {
    /// `notifications/cancelled`: the client gave up on a request.
    pub const CANCELLED: &str = "notifications/cancelled";
    /// `notifications/initialized`: a legacy client finished its handshake.
    pub const INITIALIZED: &str = "notifications/initialized";
    /// `initialize`: a legacy client's handshake.
    pub const INITIALIZE: &str = "initialize";
    /// `ping`: a liveness check (a legacy session method).
    pub const PING: &str = "ping";
    /// `logging/setLevel`: a legacy session's log level.
    pub const SET_LEVEL: &str = "logging/setLevel";
    /// `resources/subscribe`: a legacy session's resource subscription.
    pub const SUBSCRIBE: &str = "resources/subscribe";
    /// `resources/unsubscribe`: ends a legacy session's resource subscription.
    pub const UNSUBSCRIBE: &str = "resources/unsubscribe";
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_properties_follow_the_spec() {
        for m in Method::ALL {
            assert_eq!(Method::parse(m.as_str()), Some(m));
        }
        assert_eq!(Method::parse("initialize"), None);
        assert_eq!(Method::ResourcesRead.name_param(), Some("uri"));
        assert_eq!(Method::TasksCancel.name_param(), Some("taskId"));
        assert_eq!(Method::parse("tasks/list"), None);
        assert_eq!(Method::parse("tasks/result"), None);
        assert!(Method::PromptsGet.accepts_input_responses());
        assert!(!Method::ToolsList.accepts_input_responses());
    }
}
