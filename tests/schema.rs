//! docs/run.schema.json describes what ibench really writes: real run.json files (the
//! recorded fixtures and a run made here) validate against it, and a document that strays
//! from it does not.

mod common;

use std::path::PathBuf;

use serde_json::Value;

/// A small JSON Schema validator for the keywords docs/run.schema.json uses: type, const,
/// enum, properties, required, additionalProperties, propertyNames, items, minItems,
/// maxItems, minimum, maximum, oneOf, $ref (to #/$defs/…). Returns the first error's path.
fn validate(root: &Value, schema: &Value, v: &Value, path: &str) -> Result<(), String> {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.strip_prefix("#/$defs/").ok_or(format!("bad $ref {r}"))?;
        return validate(root, &root["$defs"][name], v, path);
    }
    if let Some(types) = schema.get("type") {
        let allowed: Vec<&str> = match types {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let ok = allowed.iter().any(|t| match *t {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "number" => v.is_number(),
            "integer" => v.is_u64() || v.is_i64(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            _ => false,
        });
        if !ok {
            return Err(format!("{path}: {v} is not {allowed:?}"));
        }
    }
    if let Some(c) = schema.get("const")
        && c != v
    {
        return Err(format!("{path}: {v} is not {c}"));
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array)
        && !e.contains(v)
    {
        return Err(format!("{path}: {v} not in {e:?}"));
    }
    if let (Some(min), Some(x)) = (schema.get("minimum").and_then(Value::as_f64), v.as_f64())
        && x < min
    {
        return Err(format!("{path}: {x} < {min}"));
    }
    if let (Some(max), Some(x)) = (schema.get("maximum").and_then(Value::as_f64), v.as_f64())
        && x > max
    {
        return Err(format!("{path}: {x} > {max}"));
    }
    if let Some(one_of) = schema.get("oneOf").and_then(Value::as_array) {
        let passing = one_of
            .iter()
            .filter(|s| validate(root, s, v, path).is_ok())
            .count();
        if passing != 1 {
            let errors: Vec<String> = one_of
                .iter()
                .filter_map(|s| validate(root, s, v, path).err())
                .collect();
            return Err(format!("{path}: matches {passing} of oneOf: {errors:?}"));
        }
    }
    if let Some(obj) = v.as_object() {
        let props = schema.get("properties").and_then(Value::as_object);
        if let Some(req) = schema.get("required").and_then(Value::as_array) {
            for r in req.iter().filter_map(Value::as_str) {
                if !obj.contains_key(r) {
                    return Err(format!("{path}: missing {r}"));
                }
            }
        }
        for (k, val) in obj {
            let p = format!("{path}.{k}");
            if let Some(names) = schema.get("propertyNames") {
                validate(root, names, &Value::String(k.clone()), &p)?;
            }
            match props.and_then(|m| m.get(k)) {
                Some(s) => validate(root, s, val, &p)?,
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => return Err(format!("{p}: not in the schema")),
                    Some(s @ Value::Object(_)) => validate(root, s, val, &p)?,
                    _ => {}
                },
            }
        }
    }
    if let Some(arr) = v.as_array() {
        if let Some(n) = schema.get("minItems").and_then(Value::as_u64)
            && (arr.len() as u64) < n
        {
            return Err(format!("{path}: fewer than {n} items"));
        }
        if let Some(n) = schema.get("maxItems").and_then(Value::as_u64)
            && (arr.len() as u64) > n
        {
            return Err(format!("{path}: more than {n} items"));
        }
        if let Some(items) = schema.get("items") {
            for (i, item) in arr.iter().enumerate() {
                validate(root, items, item, &format!("{path}[{i}]"))?;
            }
        }
    }
    Ok(())
}

fn schema() -> Value {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/run.schema.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn read(dir: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap()
}

#[test]
fn recorded_and_fresh_runs_match_the_schema() {
    let schema = schema();
    for name in [
        "sqlite-base",
        "postgres",
        "postgres-commit-delay",
        "mariadb-replica",
    ] {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name);
        validate(&schema, &schema, &read(&dir), "$").unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    // A run made now, with every optional part present: settle, SLA, integrity.
    let db = common::fresh_dir("schema-db");
    std::fs::create_dir_all(&db).unwrap();
    let mut opts = common::small_options(
        &format!("sqlite:{}", db.join("x.db").display()),
        "schema-run",
    );
    opts.steps = ibench::workload::steps::parse_step_list("l.i0,l.x,l.i2,qp100").unwrap();
    opts.query_seconds = 1.0;
    opts.settle_max_seconds = Some(0.0);
    // Recorded as one side of a duet, so the `duet` record is checked too.
    opts.duet = Some(ibench::results::duet::DuetSide {
        round: 1,
        slot: 0,
        started_first: true,
        partner_cell: "pg.b.w.r1".into(),
        partner_label: "b".into(),
        cpus: Some("0".into()),
    });
    let (_, dir) = common::run_and_read(opts);
    let v = read(&dir);
    assert_eq!(v["duet"]["partner_cell"], "pg.b.w.r1");
    validate(&schema, &schema, &v, "$").unwrap();
    // A microbenchmark run.
    let mut opts = common::small_options(
        &format!("sqlite:{}", db.join("micro.db").display()),
        "schema-micro",
    );
    opts.workload = ibench::results::options::Workload::Micro;
    opts.micro.rows = 500;
    opts.micro.seconds = 0.2;
    opts.steps =
        ibench::workload::steps::parse_step_list("m.load,point-query.pre_range=100,scan_range=100")
            .unwrap();
    let (_, dir) = common::run_and_read(opts);
    validate(&schema, &schema, &read(&dir), "$").unwrap();
}

#[test]
fn a_document_that_strays_from_the_schema_fails() {
    let schema = schema();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/postgres");
    let good = read(&dir);
    let mut extra = good.clone();
    extra["steps"][0]["surprise"] = Value::from(1);
    assert!(
        validate(&schema, &schema, &extra, "$")
            .unwrap_err()
            .contains("surprise")
    );
    let mut wrong = good.clone();
    wrong["steps"][0]["throughput"] = Value::from("fast");
    assert!(validate(&schema, &schema, &wrong, "$").is_err());
    let mut missing = good;
    missing.as_object_mut().unwrap().remove("label");
    assert!(
        validate(&schema, &schema, &missing, "$")
            .unwrap_err()
            .contains("label")
    );
}
