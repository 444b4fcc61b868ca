//! The groups of a matrix file: which combinations one report compares, per workload, and the
//! base.

use std::collections::BTreeSet;

use anyhow::Result;

use super::file::{GroupEntry, Source};
use super::plan::*;

/// The names a group's reports go by: each workload's, a workload with axes by its own name
/// (one report comparing its variants); and every name a group may give (those and each
/// variant's).
fn report_names(workloads: &[PlanWorkload]) -> (Vec<String>, Vec<String>) {
    let mut names: Vec<String> = Vec::new();
    for w in workloads {
        let name = w.family.as_ref().unwrap_or(&w.name);
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    let variants = workloads.iter().filter(|w| w.family.is_some());
    let known = names
        .iter()
        .cloned()
        .chain(variants.map(|w| w.name.clone()))
        .collect();
    (names, known)
}

/// A group's members, `SERVER.CONFIG`, in the servers' and configs' order.
fn members_of(g: &GroupEntry, servers: &[PlanServer]) -> Vec<String> {
    let mut members = Vec::new();
    for s in servers {
        if g.servers.as_ref().is_some_and(|l| !l.contains(&s.name)) {
            continue;
        }
        for c in &s.configs {
            if g.configs.as_ref().is_none_or(|l| l.contains(&c.name)) {
                members.push(format!("{}.{}", s.name, c.name));
            }
        }
    }
    members
}

/// A group's list of names (servers, configs or workloads), checked against the known ones.
fn check_known(
    src: &Source,
    entry: &str,
    what: &str,
    list: Option<&Vec<String>>,
    known: &[String],
) -> Result<()> {
    let Some(list) = list else {
        return Ok(());
    };
    if list.is_empty() {
        return Err(src.err(
            &format!("{entry}.{what}"),
            format!("the list is empty; name at least one or remove {what}"),
        ));
    }
    if let Some(x) = list.iter().find(|x| !known.contains(x)) {
        return Err(src.err(
            &format!("{entry}.{what}"),
            format!(
                "'{x}' is not defined (there are: {}); fix the name",
                known.join(", ")
            ),
        ));
    }
    Ok(())
}

/// The groups of the file (or one group `all`), each with its members and base.
pub(super) fn plan_groups(
    src: &Source,
    servers: &[PlanServer],
    workloads: &[PlanWorkload],
) -> Result<Vec<PlanGroup>> {
    let default_group = [("all".to_string(), GroupEntry::default())];
    let group_entries = if src.file.groups.is_empty() {
        &default_group[..]
    } else {
        &src.file.groups[..]
    };
    let server_names: Vec<String> = servers.iter().map(|s| s.name.clone()).collect();
    let config_names: Vec<String> = servers
        .iter()
        .flat_map(|s| s.configs.iter().map(|c| c.name.clone()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let (workload_names, known_workloads) = report_names(workloads);
    let mut groups = Vec::new();
    for (name, g) in group_entries {
        let entry = format!("groups.{name}");
        check_known(src, &entry, "servers", g.servers.as_ref(), &server_names)?;
        check_known(src, &entry, "configs", g.configs.as_ref(), &config_names)?;
        check_known(
            src,
            &entry,
            "workloads",
            g.workloads.as_ref(),
            &known_workloads,
        )?;
        let members = members_of(g, servers);
        if members.is_empty() {
            return Err(src.err(
                &entry,
                "no server has any of the group's configs; fix servers or configs",
            ));
        }
        let base = match &g.base {
            Some(b) if members.contains(b) => b.clone(),
            Some(b) => {
                return Err(src.err(&format!("{entry}.base"), format!("'{b}' is not in the group (its members: {}); set base = \"SERVER.CONFIG\" to one of them", members.join(", "))));
            }
            None => members[0].clone(),
        };
        groups.push(PlanGroup {
            name: name.clone(),
            members,
            workloads: g
                .workloads
                .clone()
                .unwrap_or_else(|| workload_names.clone()),
            base,
        });
    }
    Ok(groups)
}
