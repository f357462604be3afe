//! A request's `params`, read once into what its method needs: [`Method::params`] checks the
//! shape the schema gives each method and returns borrowed, typed fields (no copies), so
//! dispatch never looks a key up by string again. Open parts of the protocol (tool arguments,
//! a completion's `ref` and `context`, a listen filter) stay JSON.

use crate::method::Method;
use crate::ProtocolError;
use serde_json::{Map, Value};

/// The params of one request, by method.
///
/// Not `#[non_exhaustive]`: a server matches it exhaustively, so a method added here is a
/// compile error where it is not yet served.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Params<'a> {
    /// `server/discover`.
    Discover,
    /// `tools/list`.
    ToolsList {
        /// The page to start from (`None`: the first).
        cursor: Option<&'a str>,
    },
    /// `resources/list`.
    ResourcesList {
        /// The page to start from (`None`: the first).
        cursor: Option<&'a str>,
    },
    /// `resources/templates/list`.
    ResourceTemplatesList {
        /// The page to start from (`None`: the first).
        cursor: Option<&'a str>,
    },
    /// `prompts/list`.
    PromptsList {
        /// The page to start from (`None`: the first).
        cursor: Option<&'a str>,
    },
    /// `skills/list`.
    SkillsList {
        /// The page to start from (`None`: the first).
        cursor: Option<&'a str>,
    },
    /// `tools/call`.
    ToolsCall {
        /// The tool.
        name: &'a str,
        /// Its arguments (`None` when absent or null).
        arguments: Option<&'a Map<String, Value>>,
    },
    /// `resources/read`.
    ResourcesRead {
        /// The resource.
        uri: &'a str,
    },
    /// `prompts/get`.
    PromptsGet {
        /// The prompt.
        name: &'a str,
        /// Its arguments, every value a string (`None` when absent or null).
        arguments: Option<&'a Map<String, Value>>,
    },
    /// `completion/complete`.
    Complete {
        /// `ref`: a `ref/prompt` or `ref/resource` object.
        reference: &'a Map<String, Value>,
        /// `argument.name`.
        argument: &'a str,
        /// `argument.value`.
        value: &'a str,
        /// The whole `argument` object.
        argument_object: &'a Value,
        /// `context`, if sent.
        context: Option<&'a Value>,
    },
    /// `skills/get`.
    SkillsGet {
        /// The skill's `SKILL.md` URI.
        uri: &'a str,
    },
    /// `resources/directory/read`.
    DirectoryRead {
        /// The directory.
        uri: &'a str,
        /// The page to start from.
        cursor: Option<&'a str>,
    },
    /// `tasks/get`.
    TasksGet {
        /// `taskId`.
        task_id: &'a str,
    },
    /// `tasks/cancel`.
    TasksCancel {
        /// `taskId`.
        task_id: &'a str,
    },
    /// `tasks/update`.
    TaskUpdate {
        /// `taskId`.
        task_id: &'a str,
        /// `inputResponses`: answers keyed like the task's `inputRequests`.
        input_responses: &'a Map<String, Value>,
    },
    /// `subscriptions/listen`: the `notifications` filter object.
    Listen {
        /// `notifications`.
        notifications: &'a Map<String, Value>,
    },
}

fn string<'a>(params: &'a Map<String, Value>, key: &str, method: Method) -> Result<&'a str, ProtocolError> {
    params
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| ProtocolError::invalid_params(format!("{method} requires a string `{key}`")))
}

fn cursor(params: &Map<String, Value>) -> Result<Option<&str>, ProtocolError> {
    match params.get("cursor") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(c)) => Ok(Some(c.as_str())),
        Some(_) => Err(ProtocolError::invalid_params("cursor must be a string")),
    }
}

impl Method {
    /// Reads `params` as this method's params (see the module docs); a wrong shape is `-32602`.
    pub fn params(self, params: &Map<String, Value>) -> Result<Params<'_>, ProtocolError> {
        Ok(match self {
            Method::Discover => Params::Discover,
            Method::ToolsList => Params::ToolsList { cursor: cursor(params)? },
            Method::ResourcesList => Params::ResourcesList { cursor: cursor(params)? },
            Method::ResourceTemplatesList => Params::ResourceTemplatesList { cursor: cursor(params)? },
            Method::PromptsList => Params::PromptsList { cursor: cursor(params)? },
            Method::SkillsList => Params::SkillsList { cursor: cursor(params)? },
            Method::SkillsGet => Params::SkillsGet { uri: string(params, "uri", self)? },
            Method::ResourcesDirectoryRead => {
                Params::DirectoryRead { uri: string(params, "uri", self)?, cursor: cursor(params)? }
            }
            Method::ToolsCall => {
                let name = string(params, "name", self)?;
                let arguments = match params.get("arguments") {
                    None | Some(Value::Null) => None,
                    Some(Value::Object(a)) => Some(a),
                    Some(_) => return Err(ProtocolError::invalid_params("`arguments` must be an object")),
                };
                Params::ToolsCall { name, arguments }
            }
            Method::ResourcesRead => Params::ResourcesRead { uri: string(params, "uri", self)? },
            Method::PromptsGet => {
                let name = string(params, "name", self)?;
                let arguments = match params.get("arguments") {
                    None | Some(Value::Null) => None,
                    Some(Value::Object(a)) if a.values().all(Value::is_string) => Some(a),
                    Some(_) => {
                        return Err(ProtocolError::invalid_params("prompt `arguments` must be an object of strings"))
                    }
                };
                Params::PromptsGet { name, arguments }
            }
            Method::Complete => {
                let reference = params
                    .get("ref")
                    .and_then(Value::as_object)
                    .ok_or_else(|| ProtocolError::invalid_params("`ref` is required"))?;
                let argument_object = params.get("argument").unwrap_or(&Value::Null);
                let field = |k: &str| argument_object.get(k).and_then(Value::as_str);
                let (Some(argument), Some(value)) = (field("name"), field("value")) else {
                    return Err(ProtocolError::invalid_params("`argument` with string `name` and `value` is required"));
                };
                Params::Complete { reference, argument, value, argument_object, context: params.get("context") }
            }
            Method::TasksGet => Params::TasksGet { task_id: string(params, "taskId", self)? },
            Method::TasksCancel => Params::TasksCancel { task_id: string(params, "taskId", self)? },
            Method::TasksUpdate => Params::TaskUpdate {
                task_id: string(params, "taskId", self)?,
                input_responses: params
                    .get("inputResponses")
                    .and_then(Value::as_object)
                    .ok_or_else(|| ProtocolError::invalid_params("tasks/update requires an object `inputResponses`"))?,
            },
            Method::SubscriptionsListen => match params.get("notifications") {
                Some(Value::Object(notifications)) => Params::Listen { notifications },
                None => return Err(ProtocolError::invalid_params("subscriptions/listen requires `notifications`")),
                Some(_) => return Err(ProtocolError::invalid_params("`notifications` must be an object")),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(method: Method, params: Value) -> Result<String, String> {
        let params = params.as_object().cloned().unwrap();
        method.params(&params).map(|p| format!("{p:?}")).map_err(|e| e.message())
    }

    #[test]
    fn each_method_reads_its_fields_and_refuses_wrong_shapes() {
        assert!(read(Method::ToolsCall, json!({"name": "echo", "arguments": {"a": 1}})).unwrap().contains("\"echo\""));
        assert!(read(Method::ToolsCall, json!({"name": "echo", "arguments": null}))
            .unwrap()
            .contains("arguments: None"));
        assert_eq!(read(Method::ToolsCall, json!({})).unwrap_err(), "tools/call requires a string `name`");
        assert_eq!(
            read(Method::ToolsCall, json!({"name": "e", "arguments": [1]})).unwrap_err(),
            "`arguments` must be an object"
        );
        assert_eq!(
            read(Method::ResourcesRead, json!({"uri": 3})).unwrap_err(),
            "resources/read requires a string `uri`"
        );
        assert_eq!(
            read(Method::PromptsGet, json!({"name": "p", "arguments": {"n": 1}})).unwrap_err(),
            "prompt `arguments` must be an object of strings"
        );
        assert!(read(Method::PromptsGet, json!({"name": "p", "arguments": {"n": "1"}})).is_ok());
        assert_eq!(read(Method::ToolsList, json!({"cursor": 5})).unwrap_err(), "cursor must be a string");
        assert!(read(Method::PromptsList, json!({"cursor": null})).unwrap().contains("cursor: None"));
        assert_eq!(read(Method::Complete, json!({"argument": {}})).unwrap_err(), "`ref` is required");
        assert_eq!(
            read(Method::Complete, json!({"ref": {}, "argument": {"name": "a"}})).unwrap_err(),
            "`argument` with string `name` and `value` is required"
        );
        assert!(read(
            Method::Complete,
            json!({"ref": {"type": "ref/prompt"}, "argument": {"name": "a", "value": "b"}})
        )
        .is_ok());
        assert_eq!(
            read(Method::SubscriptionsListen, json!({})).unwrap_err(),
            "subscriptions/listen requires `notifications`"
        );
        assert_eq!(read(Method::Discover, json!({"anything": 1})).unwrap(), "Discover");
        assert_eq!(read(Method::TasksGet, json!({"taskId": 1})).unwrap_err(), "tasks/get requires a string `taskId`");
        assert_eq!(
            read(Method::TasksUpdate, json!({"taskId": "t"})).unwrap_err(),
            "tasks/update requires an object `inputResponses`"
        );
        assert!(read(Method::TasksUpdate, json!({"taskId": "t", "inputResponses": {}})).is_ok());
    }
}
