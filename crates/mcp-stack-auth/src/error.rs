//! [`AuthError`]: every way a request can fail authorization, and the one place that maps each
//! to an HTTP status and an RFC 6750 error code.

/// Why a request was not authorized. Each variant documents its HTTP answer; the mapping lives in
/// [`AuthError::http_status`] and [`AuthError::error_code`] only.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// No bearer credentials: no `Authorization` header, an empty one, or another scheme
    /// (`Basic ...`). **401**, challenge without an `error` code (RFC 6750 §3.1).
    #[error("no bearer token in the Authorization header")]
    MissingToken,
    /// The `Authorization` header is present but malformed (characters outside the `b64token`
    /// syntax, the header repeated). **400** `invalid_request`.
    #[error("malformed Authorization header: {0}")]
    MalformedHeader(&'static str),
    /// An `access_token` in the query string (RFC 6750 §2.3): never accepted, even alongside a
    /// valid header. **401** `invalid_request`.
    #[error("access tokens are accepted in the Authorization header only, not in the query string")]
    TokenInQuery,
    /// The token is not a well-formed JWT (or is too large, or carries unsupported `crit` headers).
    /// **401** `invalid_token`.
    #[error("malformed token: {0}")]
    Malformed(String),
    /// The token's `alg` is not allowed: `none`, an HMAC algorithm without a configured secret, or
    /// anything outside the configured list. **401** `invalid_token`.
    #[error("token algorithm {0} is not accepted")]
    DisallowedAlgorithm(String),
    /// No key of the key set matches the token's `kid` (after a rate-limited refresh).
    /// **401** `invalid_token`.
    #[error("no known signing key matches the token")]
    UnknownKey(Option<String>),
    /// The signature does not verify. **401** `invalid_token`.
    #[error("token signature is invalid")]
    BadSignature,
    /// The token's `iss` is not the configured issuer. **401** `invalid_token`.
    #[error("token issuer is not accepted")]
    WrongIssuer,
    /// The token's `aud` does not name this resource server (RFC 8707 audience binding).
    /// **401** `invalid_token`.
    #[error("token audience does not include this resource")]
    WrongAudience,
    /// The token expired (`exp` plus leeway is in the past). **401** `invalid_token`.
    #[error("token expired")]
    Expired,
    /// The token is not valid yet (`nbf` minus leeway is in the future). **401** `invalid_token`.
    #[error("token is not valid yet")]
    NotYetValid,
    /// A required claim is missing or has the wrong type. **401** `invalid_token`.
    #[error("token lacks a valid {0:?} claim")]
    MissingClaim(&'static str),
    /// Introspection answered `active: false` (revoked, expired or unknown token).
    /// **401** `invalid_token`.
    #[error("token is not active")]
    Inactive,
    /// The token is valid but lacks scopes the operation needs. **403** `insufficient_scope`, with
    /// `required` (every scope the operation needs) in the challenge's `scope`.
    #[error("insufficient scope: requires {}", required.join(" "))]
    InsufficientScope {
        /// The scopes the operation needs.
        required: Vec<String>,
    },
    /// The token could not be checked: the key set, metadata or introspection endpoint was
    /// unreachable or answered nonsense. **503**, no challenge (fails closed).
    #[error("authorization server unavailable: {0}")]
    Unavailable(String),
    /// The resource server is misconfigured. **500**, no challenge.
    #[error("authorization misconfigured: {0}")]
    Config(String),
}

impl AuthError {
    /// The HTTP status of the response refusing the request.
    pub fn http_status(&self) -> http::StatusCode {
        use http::StatusCode as S;
        match self {
            AuthError::MalformedHeader(_) => S::BAD_REQUEST,
            AuthError::InsufficientScope { .. } => S::FORBIDDEN,
            AuthError::Unavailable(_) => S::SERVICE_UNAVAILABLE,
            AuthError::Config(_) => S::INTERNAL_SERVER_ERROR,
            _ => S::UNAUTHORIZED,
        }
    }

    /// The RFC 6750 `error` code for the `WWW-Authenticate` challenge (`None`: no code).
    pub fn error_code(&self) -> Option<&'static str> {
        match self {
            AuthError::MissingToken | AuthError::Unavailable(_) | AuthError::Config(_) => None,
            AuthError::MalformedHeader(_) | AuthError::TokenInQuery => Some("invalid_request"),
            AuthError::InsufficientScope { .. } => Some("insufficient_scope"),
            _ => Some("invalid_token"),
        }
    }

    /// Whether the response carries a `WWW-Authenticate` challenge (every 4xx does).
    pub fn has_challenge(&self) -> bool {
        !self.http_status().is_server_error()
    }

    /// Whether the failure is the key set's fault and a key refresh might help.
    pub fn is_unknown_key(&self) -> bool {
        matches!(self, AuthError::UnknownKey(_))
    }

    /// The scopes to name in the challenge for this error, if it fixes them.
    pub fn required_scopes(&self) -> Option<&[String]> {
        match self {
            AuthError::InsufficientScope { required } => Some(required),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapping() {
        let cases: Vec<(AuthError, u16, Option<&str>)> = vec![
            (AuthError::MissingToken, 401, None),
            (AuthError::MalformedHeader("x"), 400, Some("invalid_request")),
            (AuthError::TokenInQuery, 401, Some("invalid_request")),
            (AuthError::Expired, 401, Some("invalid_token")),
            (AuthError::WrongAudience, 401, Some("invalid_token")),
            (AuthError::DisallowedAlgorithm("none".into()), 401, Some("invalid_token")),
            (AuthError::InsufficientScope { required: vec!["a".into()] }, 403, Some("insufficient_scope")),
            (AuthError::Unavailable("down".into()), 503, None),
            (AuthError::Config("bad".into()), 500, None),
        ];
        for (e, status, code) in cases {
            assert_eq!((e.http_status().as_u16(), e.error_code()), (status, code), "{e:?}");
            assert_eq!(e.has_challenge(), status < 500);
        }
    }
}
