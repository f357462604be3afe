//! The restricted, primitive JSON Schema definitions allowed as fields of an
//! elicitation form: strings, numbers, booleans and enums.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::macros::{has_field, str_field};

const_str! {
    /// Marker for `"type": "string"`.
    StringSchemaType = "string"
}
const_str! {
    /// Marker for `"type": "boolean"`.
    BooleanSchemaType = "boolean"
}
const_str! {
    /// Marker for `"type": "array"`.
    ArraySchemaType = "array"
}

/// Format constraint of a [`StringSchema`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum StringFormat {
    /// `"date"`
    #[serde(rename = "date")]
    Date,
    /// `"date-time"`
    #[serde(rename = "date-time")]
    DateTime,
    /// `"email"`
    #[serde(rename = "email")]
    Email,
    /// `"uri"`
    #[serde(rename = "uri")]
    Uri,
}

/// A string form field.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StringSchema {
    /// Always `"string"`.
    pub r#type: StringSchemaType,
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description shown to the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Maximum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// Expected format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// Whether a [`NumberSchema`] accepts any number or only integers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NumberSchemaType {
    /// Integers only.
    Integer,
    /// Any number.
    #[default]
    Number,
}

/// A numeric form field.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NumberSchema {
    /// `"number"` or `"integer"`.
    pub r#type: NumberSchemaType,
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description shown to the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum value.
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "crate::types::num::opt_f64")]
    pub minimum: Option<f64>,
    /// Maximum value.
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "crate::types::num::opt_f64")]
    pub maximum: Option<f64>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "crate::types::num::opt_f64")]
    pub default: Option<f64>,
}

/// A boolean form field.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BooleanSchema {
    /// Always `"boolean"`.
    pub r#type: BooleanSchemaType,
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description shown to the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
}

/// One option of a titled enum: a value and its display label.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnumOption {
    /// The enum value.
    pub r#const: String,
    /// Display label for the value.
    pub title: String,
}

/// Single selection among plain values, without display titles.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UntitledSingleSelectEnumSchema {
    /// Always `"string"`.
    pub r#type: StringSchemaType,
    /// Title of the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description of the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The values to choose from.
    pub r#enum: Vec<String>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// Single selection among options with display titles.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledSingleSelectEnumSchema {
    /// Always `"string"`.
    pub r#type: StringSchemaType,
    /// Title of the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description of the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The options, with values and display labels.
    pub one_of: Vec<EnumOption>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// The `items` of an [`UntitledMultiSelectEnumSchema`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UntitledEnumItems {
    /// Always `"string"`.
    pub r#type: StringSchemaType,
    /// The values to choose from.
    pub r#enum: Vec<String>,
}

/// The `items` of a [`TitledMultiSelectEnumSchema`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledEnumItems {
    /// The options, with values and display labels.
    pub any_of: Vec<EnumOption>,
}

/// Multiple selection among plain values, without display titles.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UntitledMultiSelectEnumSchema {
    /// Always `"array"`.
    pub r#type: ArraySchemaType,
    /// Title of the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description of the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum number of selected items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Maximum number of selected items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The schema of the items.
    pub items: UntitledEnumItems,
    /// Default selection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

/// Multiple selection among options with display titles.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledMultiSelectEnumSchema {
    /// Always `"array"`.
    pub r#type: ArraySchemaType,
    /// Title of the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description of the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum number of selected items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Maximum number of selected items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The schema of the items, with the options.
    pub items: TitledEnumItems,
    /// Default selection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

/// Deprecated single selection with display names in `enumNames`; use
/// [`TitledSingleSelectEnumSchema`] instead.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LegacyTitledEnumSchema {
    /// Always `"string"`.
    pub r#type: StringSchemaType,
    /// Title of the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description of the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The values to choose from.
    pub r#enum: Vec<String>,
    /// Display names of the values (non-standard JSON Schema).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enum_names: Option<Vec<String>>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// Which kind of primitive schema a JSON value is, judged by its `type` and
/// the keys that tell the enum variants apart.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SchemaShape {
    String,
    Number,
    Boolean,
    UntitledSingle,
    TitledSingle,
    UntitledMulti,
    TitledMulti,
    Legacy,
}

fn schema_shape(v: &Value) -> Result<SchemaShape, String> {
    match str_field(v, "type") {
        Some("string") => Ok(if has_field(v, "oneOf") {
            SchemaShape::TitledSingle
        } else if has_field(v, "enumNames") {
            SchemaShape::Legacy
        } else if has_field(v, "enum") {
            SchemaShape::UntitledSingle
        } else {
            SchemaShape::String
        }),
        Some("number" | "integer") => Ok(SchemaShape::Number),
        Some("boolean") => Ok(SchemaShape::Boolean),
        Some("array") => Ok(if v.get("items").is_some_and(|items| has_field(items, "anyOf")) {
            SchemaShape::TitledMulti
        } else {
            SchemaShape::UntitledMulti
        }),
        Some(other) => Err(format!("unsupported primitive schema type {other:?}")),
        None => Err("primitive schema without a string `type`".to_owned()),
    }
}

union_enum! {
    /// A restricted schema for one form field: primitive types only, no
    /// nested objects or arrays (other than multi-select enums).
    pub enum PrimitiveSchemaDefinition {
        /// A string field.
        String(StringSchema),
        /// A number or integer field.
        Number(NumberSchema),
        /// A boolean field.
        Boolean(BooleanSchema),
        /// Single selection without titles.
        UntitledSingleSelectEnum(UntitledSingleSelectEnumSchema),
        /// Single selection with titles.
        TitledSingleSelectEnum(TitledSingleSelectEnumSchema),
        /// Multiple selection without titles.
        UntitledMultiSelectEnum(UntitledMultiSelectEnumSchema),
        /// Multiple selection with titles.
        TitledMultiSelectEnum(TitledMultiSelectEnumSchema),
        /// Deprecated single selection with `enumNames`.
        LegacyTitledEnum(LegacyTitledEnumSchema),
    }
    select |v| {
        schema_shape(v).map(|shape| match shape {
            SchemaShape::String => Kind::String,
            SchemaShape::Number => Kind::Number,
            SchemaShape::Boolean => Kind::Boolean,
            SchemaShape::UntitledSingle => Kind::UntitledSingleSelectEnum,
            SchemaShape::TitledSingle => Kind::TitledSingleSelectEnum,
            SchemaShape::UntitledMulti => Kind::UntitledMultiSelectEnum,
            SchemaShape::TitledMulti => Kind::TitledMultiSelectEnum,
            SchemaShape::Legacy => Kind::LegacyTitledEnum,
        })
    }
}

union_enum! {
    /// Any enum form field.
    pub enum EnumSchema {
        /// Single selection without titles.
        UntitledSingleSelect(UntitledSingleSelectEnumSchema),
        /// Single selection with titles.
        TitledSingleSelect(TitledSingleSelectEnumSchema),
        /// Multiple selection without titles.
        UntitledMultiSelect(UntitledMultiSelectEnumSchema),
        /// Multiple selection with titles.
        TitledMultiSelect(TitledMultiSelectEnumSchema),
        /// Deprecated single selection with `enumNames`.
        LegacyTitled(LegacyTitledEnumSchema),
    }
    select |v| {
        schema_shape(v).and_then(|shape| match shape {
            SchemaShape::UntitledSingle => Ok(Kind::UntitledSingleSelect),
            SchemaShape::TitledSingle => Ok(Kind::TitledSingleSelect),
            SchemaShape::UntitledMulti => Ok(Kind::UntitledMultiSelect),
            SchemaShape::TitledMulti => Ok(Kind::TitledMultiSelect),
            SchemaShape::Legacy => Ok(Kind::LegacyTitled),
            _ => Err("not an enum schema: needs `enum`, `oneOf` or array `items`".to_owned()),
        })
    }
}

union_enum! {
    /// A single-selection enum form field.
    pub enum SingleSelectEnumSchema {
        /// Without titles.
        Untitled(UntitledSingleSelectEnumSchema),
        /// With titles.
        Titled(TitledSingleSelectEnumSchema),
    }
    select |v| {
        if has_field(v, "oneOf") {
            Ok(Kind::Titled)
        } else {
            Ok(Kind::Untitled)
        }
    }
}

union_enum! {
    /// A multiple-selection enum form field.
    pub enum MultiSelectEnumSchema {
        /// Without titles.
        Untitled(UntitledMultiSelectEnumSchema),
        /// With titles.
        Titled(TitledMultiSelectEnumSchema),
    }
    select |v| {
        if v.get("items").is_some_and(|items| has_field(items, "anyOf")) {
            Ok(Kind::Titled)
        } else {
            Ok(Kind::Untitled)
        }
    }
}
