//! Frontmatter YAML to JSON (YAML 1.2 core schema, as the skills SEP's hosts parse it).

use serde_json::{Map, Number, Value};
use yaml_rust2::{Yaml, YamlLoader};

/// Nesting deeper than this is refused (frontmatter is flat in practice).
const MAX_DEPTH: usize = 16;

/// Parses one YAML document that must be a mapping with string keys.
pub(crate) fn parse_mapping(text: &str) -> Result<Map<String, Value>, String> {
    let docs = YamlLoader::load_from_str(text).map_err(|e| e.to_string())?;
    match docs.into_iter().next() {
        Some(Yaml::Hash(_)) | None if text.trim().is_empty() => Err("the frontmatter is empty".into()),
        Some(y @ Yaml::Hash(_)) => match to_json(y, 0)? {
            Value::Object(m) => Ok(m),
            _ => unreachable!("a hash converts to an object"),
        },
        _ => Err("the frontmatter must be a YAML mapping (key: value lines)".into()),
    }
}

fn to_json(y: Yaml, depth: usize) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err("nested too deeply".into());
    }
    Ok(match y {
        Yaml::Null => Value::Null,
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Integer(i) => Value::Number(i.into()),
        Yaml::Real(r) => {
            let f: f64 = r.parse().map_err(|_| format!("{r:?} is not a number JSON can hold"))?;
            // YAML's 1.0 is the number 1, as JavaScript and JSON readers see it.
            if f.fract() == 0.0 && f.abs() < 9.0e15 {
                Value::Number((f as i64).into())
            } else {
                Number::from_f64(f).map(Value::Number).ok_or_else(|| format!("{r:?} is not a finite number"))?
            }
        }
        Yaml::String(s) => Value::String(s),
        Yaml::Array(a) => Value::Array(a.into_iter().map(|v| to_json(v, depth + 1)).collect::<Result<_, _>>()?),
        Yaml::Hash(h) => {
            let mut m = Map::new();
            for (k, v) in h {
                let key = match k {
                    Yaml::String(s) => s,
                    Yaml::Integer(i) => i.to_string(),
                    Yaml::Boolean(b) => b.to_string(),
                    _ => return Err("mapping keys must be strings".into()),
                };
                m.insert(key, to_json(v, depth + 1)?);
            }
            Value::Object(m)
        }
        Yaml::Alias(_) => return Err("aliases are not supported".into()),
        Yaml::BadValue => return Err("invalid value".into()),
    })
}
