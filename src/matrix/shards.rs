//! Shards: which part of the cells a host runs (`--shard I/N` or the scheduler's task id),
//! split so that the shards end at about the same time.

use anyhow::{Result, bail};

use super::plan::*;

impl Shard {
    /// The whole matrix.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// `I/N` with 0 ≤ I < N.
    pub fn parse(s: &str) -> Result<Shard> {
        let bad = || {
            anyhow::anyhow!(
                "--shard '{s}' is not I/N with 0 <= I < N (e.g. --shard 0/4); fix --shard"
            )
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// The shard index from a scheduler: the task's own id, `JOB_COMPLETION_INDEX`
    /// (Kubernetes indexed Job) or `SLURM_ARRAY_TASK_ID` (Slurm job array, submitted as
    /// `--array=0-(N-1)`; a rerun of one shard is `--array=I`, and runs shard I). Refused when
    /// the id is not below `count`, naming the variable.
    pub fn from_env(count: u32, env: &dyn Fn(&str) -> Option<String>) -> Result<Shard> {
        if count == 0 {
            bail!("--shards must be at least 1");
        }
        let parse = |var: &str, v: String| -> Result<u32> {
            v.trim().parse::<u32>().map_err(|_| {
                anyhow::anyhow!(
                    "{var}='{v}' is not a shard index; fix the job's index or pass --shard I/N"
                )
            })
        };
        let (var, index) = if let Some(v) = env("JOB_COMPLETION_INDEX") {
            ("JOB_COMPLETION_INDEX", parse("JOB_COMPLETION_INDEX", v)?)
        } else if let Some(v) = env("SLURM_ARRAY_TASK_ID") {
            ("SLURM_ARRAY_TASK_ID", parse("SLURM_ARRAY_TASK_ID", v)?)
        } else {
            bail!(
                "--shards {count} needs the shard index from JOB_COMPLETION_INDEX (Kubernetes indexed Job) or SLURM_ARRAY_TASK_ID (Slurm job array), and neither is set; pass --shard I/{count} instead"
            );
        };
        if index >= count {
            bail!(
                "{var}={index} is not below --shards {count}: the task id is the shard index, so submit task ids 0 to {} (Slurm --array=0-{}, Kubernetes completions {count}) or fix --shards",
                count - 1,
                count - 1
            );
        }
        Ok(Shard { index, count })
    }

    /// A note when the scheduler's array does not cover `count` shards: a Slurm array whose
    /// task ids (`SLURM_ARRAY_TASK_MIN`..`_MAX`, `_COUNT` of them) are not exactly 0 to
    /// count-1, or a Kubernetes Job whose `JOB_COMPLETIONS` differs. Fine for the rerun of one
    /// shard, a mistake otherwise, so it is said, not refused.
    pub fn array_note(count: u32, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
        let num = |k: &str| env(k).and_then(|v| v.trim().parse::<u32>().ok());
        if let (Some(min), Some(max)) = (num("SLURM_ARRAY_TASK_MIN"), num("SLURM_ARRAY_TASK_MAX")) {
            let tasks = num("SLURM_ARRAY_TASK_COUNT").unwrap_or(max.saturating_sub(min) + 1);
            if min != 0 || max + 1 != count || tasks != count {
                return Some(format!(
                    "note: the Slurm array has {tasks} task(s) with ids {min} to {max}, but --shards is {count}: only the shards with those ids run in this array (right for a rerun of one shard; otherwise submit --array=0-{})",
                    count - 1
                ));
            }
        }
        if let Some(n) = num("JOB_COMPLETIONS").filter(|&n| n != count) {
            return Some(format!(
                "note: the Job has {n} completions but --shards is {count}: set completions and parallelism to {count}"
            ));
        }
        None
    }

    /// What a results dir records of the shard that writes it: `I/N` and the hash of the
    /// plan's split (cell names and the shard of each), so a dir is never filled by another
    /// shard or another split.
    pub fn identity(&self, plan: &Plan) -> ShardIdentity {
        use sha2::{Digest, Sha256};
        let map = plan.shard_of_combos(self.count);
        let mut hasher = Sha256::new();
        for c in &plan.cells {
            hasher.update(c.name.as_bytes());
            hasher.update(map.get(&c.combo).copied().unwrap_or(0).to_le_bytes());
        }
        let digest = hasher.finalize();
        ShardIdentity {
            shard: self.to_string(),
            plan_hash: digest.iter().take(6).map(|b| format!("{b:02x}")).collect(),
        }
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Plan {
    /// The shard of each combination: longest estimated first onto the least-loaded shard
    /// (ties to the lowest index), so that the shards end at about the same time. All repeats of
    /// a combination go to one shard (its spread is then measured on one host). Deterministic:
    /// every host computes the same split from the same file, no coordinator.
    pub fn shard_of_combos(&self, count: u32) -> std::collections::BTreeMap<String, u32> {
        let mut combos: Vec<(String, f64, usize)> = Vec::new();
        for (i, c) in self.cells.iter().enumerate() {
            match combos.iter_mut().find(|(n, _, _)| *n == c.combo) {
                Some(x) => x.1 += c.estimate_seconds,
                None => combos.push((c.combo.clone(), c.estimate_seconds, i)),
            }
        }
        combos.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
        let mut load = vec![0.0f64; count.max(1) as usize];
        let mut out = std::collections::BTreeMap::new();
        for (name, est, _) in combos {
            let (k, _) = load
                .iter()
                .enumerate()
                .min_by(|a, b| a.1.total_cmp(b.1).then(a.0.cmp(&b.0)))
                .unwrap_or((0, &0.0));
            load[k] += est;
            out.insert(name, u32::try_from(k).unwrap_or(u32::MAX));
        }
        out
    }

    /// The cells of one shard, in run order.
    pub fn cells_of(&self, shard: Shard) -> Vec<&Cell> {
        let map = self.shard_of_combos(shard.count);
        self.cells
            .iter()
            .filter(|c| map.get(&c.combo).copied().unwrap_or(0) == shard.index)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_parsing_and_environment() {
        assert_eq!(Shard::parse("1/3").unwrap(), Shard { index: 1, count: 3 });
        for bad in ["3/3", "x/2", "1", "0/0"] {
            assert!(
                Shard::parse(bad)
                    .unwrap_err()
                    .to_string()
                    .contains("--shard"),
                "{bad}"
            );
        }
        let env = |k: &str| match k {
            "SLURM_ARRAY_TASK_ID" => Some("3".to_string()),
            "SLURM_ARRAY_TASK_MIN" => Some("1".to_string()),
            _ => None,
        };
        // The task id is the shard index, whatever the array's first id.
        assert_eq!(
            Shard::from_env(4, &env).unwrap(),
            Shard { index: 3, count: 4 }
        );
        let err = Shard::from_env(3, &env).unwrap_err().to_string();
        assert!(
            err.contains("SLURM_ARRAY_TASK_ID=3 is not below --shards 3"),
            "{err}"
        );
        let k8s = |k: &str| (k == "JOB_COMPLETION_INDEX").then(|| "1".to_string());
        assert_eq!(
            Shard::from_env(2, &k8s).unwrap(),
            Shard { index: 1, count: 2 }
        );
        assert!(
            Shard::from_env(2, &|_| None)
                .unwrap_err()
                .to_string()
                .contains("--shard")
        );
        assert!(Shard::from_env(1, &k8s).is_err());
    }

    #[test]
    fn an_array_that_does_not_cover_the_shards_is_said() {
        let slurm = |min: &'static str, max: &'static str, n: &'static str| {
            move |k: &str| match k {
                "SLURM_ARRAY_TASK_MIN" => Some(min.to_string()),
                "SLURM_ARRAY_TASK_MAX" => Some(max.to_string()),
                "SLURM_ARRAY_TASK_COUNT" => Some(n.to_string()),
                _ => None,
            }
        };
        assert_eq!(Shard::array_note(2, &slurm("0", "1", "2")), None);
        // --array=0-1 --shards 3: shard 2 would never run.
        let note = Shard::array_note(3, &slurm("0", "1", "2")).unwrap();
        assert!(
            note.contains("2 task(s) with ids 0 to 1") && note.contains("--array=0-2"),
            "{note}"
        );
        // The rerun of one shard: said, and fine.
        assert!(
            Shard::array_note(2, &slurm("1", "1", "1"))
                .unwrap()
                .contains("rerun")
        );
        let k8s = |k: &str| (k == "JOB_COMPLETIONS").then(|| "3".to_string());
        assert!(Shard::array_note(2, &k8s).unwrap().contains("completions"));
    }
}
