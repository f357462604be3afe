//! A server's MCP Apps metadata is untrusted: parsing any `_meta.ui` of a tool or a view never
//! panics, and the Content-Security-Policy a host builds from it keeps its fixed shape whatever
//! the server declared: the same ten directives in the same order, the restrictive keywords
//! where nothing valid was declared, and every other source one the server listed that is a
//! plain source expression (so no `;`, `,`, quote, space or wildcard-only source gets in).
use mcp_protocol::apps::{ResourceUi, ToolUi};
use serde_json::{Map, Value};

const DIRECTIVES: [&str; 10] = [
    "default-src",
    "script-src",
    "style-src",
    "connect-src",
    "img-src",
    "font-src",
    "media-src",
    "frame-src",
    "object-src",
    "base-uri",
];
const KEYWORDS: [&str; 4] = ["'self'", "'unsafe-inline'", "data:", "'none'"];

/// Checks one input (panics on a violated property).
pub fn check(data: &[u8]) {
    let Ok(Value::Object(meta)) = serde_json::from_slice::<Value>(data) else { return };
    let _ = ToolUi::of(Some(&meta));
    let Some(ui) = ResourceUi::of(Some(&meta)) else {
        // Without parseable settings a host uses the default, which has the same shape.
        return check_policy(&ResourceUi::default(), &Map::new());
    };
    let declared = meta.get("ui").and_then(|u| u.get("csp")).and_then(Value::as_object).cloned().unwrap_or_default();
    check_policy(&ui, &declared);
    if let Some(p) = ui.permissions {
        let allow = p.allow_attribute();
        assert!(
            allow.split("; ").filter(|f| !f.is_empty()).all(|f| [
                "camera",
                "microphone",
                "geolocation",
                "clipboard-write"
            ]
            .contains(&f)),
            "{allow}"
        );
    }
}

fn check_policy(ui: &ResourceUi, declared: &Map<String, Value>) {
    let policy = ui.content_security_policy();
    let listed: Vec<&str> = declared.values().filter_map(Value::as_array).flatten().filter_map(Value::as_str).collect();
    let parts: Vec<&str> = policy.split("; ").collect();
    assert_eq!(parts.len(), DIRECTIVES.len(), "{policy}");
    for (part, name) in parts.iter().zip(DIRECTIVES) {
        let mut words = part.split(' ');
        assert_eq!(words.next(), Some(name), "{policy}");
        let sources: Vec<&str> = words.collect();
        assert!(!sources.is_empty(), "{policy}");
        for s in sources {
            let fixed = KEYWORDS.contains(&s);
            let from_server = listed.contains(&s) && s.contains("://") && !s.contains([';', ',', '\'', '"', ' ', '\n']);
            assert!(fixed || from_server, "source {s:?} in {policy}");
        }
    }
    assert!(!policy.contains(['\n', '\r', ',']), "{policy}");
}
