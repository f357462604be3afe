//! Internal macros and helpers that generate the repetitive parts of the
//! protocol types: constant-valued marker types, unions dispatched on the
//! JSON shape, and the JSON-RPC envelopes of requests, notifications and
//! result responses.

use serde_json::Value;

/// Returns the string value of `key` if `value` is an object holding a string there.
pub(crate) fn str_field<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// Returns true if `value` is an object that has `key`.
pub(crate) fn has_field(value: &Value, key: &str) -> bool {
    value.get(key).is_some()
}

/// Defines a unit marker type that serializes as one fixed string and rejects
/// every other value on deserialize.
macro_rules! const_str {
    ($(#[$m:meta])* $name:ident = $value:literal) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name;

        impl $name {
            /// The fixed value on the wire.
            pub const VALUE: &'static str = $value;

            /// Returns the fixed value on the wire.
            pub const fn as_str(&self) -> &'static str {
                $value
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str($value)
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::std::result::Result<S::Ok, S::Error> {
                serializer.serialize_str($value)
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::std::result::Result<Self, D::Error> {
                struct MarkerVisitor;
                impl ::serde::de::Visitor<'_> for MarkerVisitor {
                    type Value = $name;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        write!(f, "the string {:?}", $value)
                    }
                    fn visit_str<E: ::serde::de::Error>(
                        self,
                        v: &str,
                    ) -> ::std::result::Result<$name, E> {
                        if v == $value {
                            Ok($name)
                        } else {
                            Err(E::invalid_value(::serde::de::Unexpected::Str(v), &self))
                        }
                    }
                }
                deserializer.deserialize_str(MarkerVisitor)
            }
        }
    };
}

/// Defines a unit marker type that serializes as one fixed integer and
/// rejects every other value on deserialize.
macro_rules! const_int {
    ($(#[$m:meta])* $name:ident = $value:literal) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name;

        impl $name {
            /// The fixed value on the wire.
            pub const VALUE: i64 = $value;
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::std::result::Result<S::Ok, S::Error> {
                serializer.serialize_i64($value)
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::std::result::Result<Self, D::Error> {
                struct MarkerVisitor;
                impl ::serde::de::Visitor<'_> for MarkerVisitor {
                    type Value = $name;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        write!(f, "the integer {}", $value)
                    }
                    fn visit_i64<E: ::serde::de::Error>(
                        self,
                        v: i64,
                    ) -> ::std::result::Result<$name, E> {
                        if v == $value {
                            Ok($name)
                        } else {
                            Err(E::invalid_value(::serde::de::Unexpected::Signed(v), &self))
                        }
                    }
                    fn visit_u64<E: ::serde::de::Error>(
                        self,
                        v: u64,
                    ) -> ::std::result::Result<$name, E> {
                        match i64::try_from(v) {
                            Ok(v) => self.visit_i64(v),
                            Err(_) => Err(E::invalid_value(::serde::de::Unexpected::Unsigned(v), &self)),
                        }
                    }
                }
                deserializer.deserialize_i64(MarkerVisitor)
            }
        }
    };
}

/// Defines an enum whose variants each wrap one type. Serialization delegates
/// to the wrapped value; deserialization buffers the JSON value and lets the
/// `select` block (which sees it as `&Value`) pick the variant, returning
/// `Ok(Kind::Variant)` or `Err(message)`. Also derives `From` for each variant.
macro_rules! union_enum {
    (
        $(#[$m:meta])*
        pub enum $name:ident {
            $( $(#[$vm:meta])* $variant:ident($ty:ty) ),+ $(,)?
        }
        select |$v:ident| $select:block
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq)]
        #[allow(clippy::large_enum_variant)] // wire types: short-lived, boxing would only hurt ergonomics
        pub enum $name {
            $( $(#[$vm])* $variant($ty), )+
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::std::result::Result<S::Ok, S::Error> {
                match self {
                    $( Self::$variant(inner) => ::serde::Serialize::serialize(inner, serializer), )+
                }
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::std::result::Result<Self, D::Error> {
                #[allow(clippy::enum_variant_names)]
                enum Kind {
                    $( $variant, )+
                }
                let value = <::serde_json::Value as ::serde::Deserialize>::deserialize(deserializer)?;
                let kind: ::std::result::Result<Kind, ::std::string::String> = {
                    let $v = &value;
                    $select
                };
                match kind {
                    $(
                        Ok(Kind::$variant) => <$ty as ::serde::Deserialize>::deserialize(value)
                            .map(Self::$variant)
                            .map_err(<D::Error as ::serde::de::Error>::custom),
                    )+
                    Err(msg) => Err(<D::Error as ::serde::de::Error>::custom(msg)),
                }
            }
        }

        $(
            impl ::std::convert::From<$ty> for $name {
                fn from(value: $ty) -> Self {
                    Self::$variant(value)
                }
            }
        )+
    };
}

/// A [`union_enum!`] whose variant is chosen by the string value of one field
/// (`"type"` for content blocks, `"method"` for requests and notifications).
macro_rules! tagged_union {
    (
        $(#[$m:meta])*
        pub enum $name:ident by $key:literal {
            $( $(#[$vm:meta])* $variant:ident($ty:ty) = $tag:literal ),+ $(,)?
        }
    ) => {
        union_enum! {
            $(#[$m])*
            pub enum $name {
                $( $(#[$vm])* $variant($ty) ),+
            }
            select |v| {
                match $crate::types::macros::str_field(v, $key) {
                    $( Some($tag) => Ok(Kind::$variant), )+
                    Some(other) => Err(format!(
                        concat!("unknown `", $key, "` value {:?} for ", stringify!($name)),
                        other
                    )),
                    None => Err(concat!("missing string field `", $key, "` for ", stringify!($name)).to_owned()),
                }
            }
        }
    };
}

/// Defines a request envelope (`jsonrpc`, `id`, fixed `method`, `params`),
/// plus the marker type for its method name.
macro_rules! request_type {
    (
        $(#[$m:meta])*
        pub struct $name:ident { method: $marker:ident = $method:literal, params: $params:ty $(,)? }
    ) => {
        const_str! {
            #[doc = concat!("Marker for the method name `", $method, "`.")]
            $marker = $method
        }

        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, ::serde::Serialize, ::serde::Deserialize)]
        pub struct $name {
            /// JSON-RPC version; always `"2.0"`.
            pub jsonrpc: $crate::types::JsonRpcVersion,
            /// Identifier of the request, echoed by its response.
            pub id: $crate::types::RequestId,
            #[doc = concat!("Method name; always `", $method, "`.")]
            pub method: $marker,
            /// Parameters of the request.
            pub params: $params,
        }

        impl $name {
            /// Method name of this request on the wire.
            pub const METHOD: &'static str = $method;

            /// Builds the request from its id and parameters.
            pub fn new(id: impl Into<$crate::types::RequestId>, params: $params) -> Self {
                Self {
                    jsonrpc: $crate::types::JsonRpcVersion,
                    id: id.into(),
                    method: $marker,
                    params,
                }
            }
        }
    };
}

/// Defines a notification envelope (`jsonrpc`, fixed `method`, `params`),
/// plus the marker type for its method name. `params?` makes params optional.
macro_rules! notification_type {
    (
        $(#[$m:meta])*
        pub struct $name:ident { method: $marker:ident = $method:literal, params: $params:ty $(,)? }
    ) => {
        const_str! {
            #[doc = concat!("Marker for the method name `", $method, "`.")]
            $marker = $method
        }

        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, ::serde::Serialize, ::serde::Deserialize)]
        pub struct $name {
            /// JSON-RPC version; always `"2.0"`.
            pub jsonrpc: $crate::types::JsonRpcVersion,
            #[doc = concat!("Method name; always `", $method, "`.")]
            pub method: $marker,
            /// Parameters of the notification.
            pub params: $params,
        }

        impl $name {
            /// Method name of this notification on the wire.
            pub const METHOD: &'static str = $method;

            /// Builds the notification from its parameters.
            pub fn new(params: $params) -> Self {
                Self { jsonrpc: $crate::types::JsonRpcVersion, method: $marker, params }
            }
        }
    };
    (
        $(#[$m:meta])*
        pub struct $name:ident { method: $marker:ident = $method:literal, params?: $params:ty $(,)? }
    ) => {
        const_str! {
            #[doc = concat!("Marker for the method name `", $method, "`.")]
            $marker = $method
        }

        $(#[$m])*
        #[derive(Debug, Clone, Default, PartialEq, ::serde::Serialize, ::serde::Deserialize)]
        pub struct $name {
            /// JSON-RPC version; always `"2.0"`.
            pub jsonrpc: $crate::types::JsonRpcVersion,
            #[doc = concat!("Method name; always `", $method, "`.")]
            pub method: $marker,
            /// Optional parameters of the notification.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub params: Option<$params>,
        }

        impl $name {
            /// Method name of this notification on the wire.
            pub const METHOD: &'static str = $method;

            /// Builds the notification without parameters.
            pub fn new() -> Self {
                Self::default()
            }
        }
    };
}

/// Defines a successful JSON-RPC response envelope with a typed `result`.
macro_rules! result_response {
    (
        $(#[$m:meta])*
        pub struct $name:ident { result: $result:ty $(,)? }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, ::serde::Serialize, ::serde::Deserialize)]
        pub struct $name {
            /// JSON-RPC version; always `"2.0"`.
            pub jsonrpc: $crate::types::JsonRpcVersion,
            /// Identifier of the request this responds to.
            pub id: $crate::types::RequestId,
            /// The result of the request.
            pub result: $result,
        }

        impl $name {
            /// Builds the response for the request `id`.
            pub fn new(id: impl Into<$crate::types::RequestId>, result: impl Into<$result>) -> Self {
                Self { jsonrpc: $crate::types::JsonRpcVersion, id: id.into(), result: result.into() }
            }
        }
    };
}
