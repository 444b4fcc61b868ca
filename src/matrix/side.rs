//! One side of a duet round (`order = "duet"`): the step barrier both sides meet at, the
//! gate the side that starts second waits at, the CPUs it is pinned to, and the runner's
//! observer that waits at the barrier before each step.

use std::path::PathBuf;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use anyhow::{Result, bail};

use crate::results::StepRecord;
use crate::results::duet::DuetSide;
use crate::runner::{RunObserver, stop};
use crate::workload::plan::StepPlan;
/// A barrier of the sides still running: a wait returns when every side still in the duet
/// waits, or at once when the others left.
pub struct StepBarrier {
    state: Mutex<BarrierState>,
    turn: Condvar,
}

struct BarrierState {
    parties: usize,
    waiting: usize,
    generation: u64,
}

impl StepBarrier {
    /// A barrier of `parties` sides.
    pub fn new(parties: usize) -> StepBarrier {
        StepBarrier {
            state: Mutex::new(BarrierState {
                parties,
                waiting: 0,
                generation: 0,
            }),
            turn: Condvar::new(),
        }
    }

    /// Wait until every side still in the duet waits here (or the run is interrupted).
    pub fn wait(&self) {
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        s.waiting += 1;
        if s.waiting >= s.parties {
            s.waiting = 0;
            s.generation += 1;
            self.turn.notify_all();
            return;
        }
        let generation = s.generation;
        while s.generation == generation && !stop::interrupted() {
            match self.turn.wait_timeout(s, Duration::from_millis(250)) {
                Ok((next, _)) => s = next,
                Err(_) => return,
            }
        }
    }

    /// This side leaves the duet (its run ended, however): the others no longer wait for it.
    pub fn leave(&self) {
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        s.parties = s.parties.saturating_sub(1);
        if s.waiting > 0 && s.waiting >= s.parties {
            s.waiting = 0;
            s.generation += 1;
            self.turn.notify_all();
        }
    }
}

/// A one-way gate: the side that starts second waits until the first side's server is up
/// (or failed to start).
#[derive(Default)]
pub struct Gate {
    open: Mutex<bool>,
    turn: Condvar,
}

impl Gate {
    /// Let the waiting side go.
    pub fn open(&self) {
        if let Ok(mut o) = self.open.lock() {
            *o = true;
            self.turn.notify_all();
        }
    }

    /// Wait until the gate opens (or the run is interrupted).
    pub fn wait(&self) {
        let Ok(mut o) = self.open.lock() else {
            return;
        };
        while !*o && !stop::interrupted() {
            match self.turn.wait_timeout(o, Duration::from_millis(250)) {
                Ok((next, _)) => o = next,
                Err(_) => return,
            }
        }
    }
}

/// What one side of a round shares with the other and what it was given.
pub struct DuetContext<'a> {
    /// The record this side's run.json carries.
    pub side: DuetSide,
    /// The step barrier both sides meet at.
    pub barrier: &'a StepBarrier,
    /// Opened by the side that starts first once its server is up; waited on by the other.
    pub started: &'a Gate,
    /// The CPUs to pin this side's thread (and so its server and clients) to.
    pub cpus: Option<Vec<usize>>,
}

impl DuetContext<'_> {
    /// The slot's instance dir (short: unix socket paths are limited to 107 bytes).
    pub fn instance_dir(&self) -> PathBuf {
        std::env::temp_dir().join(format!(
            "ibm-{}-duet-s{}",
            std::process::id(),
            self.side.slot
        ))
    }

    /// Before this side starts its server: wait for the first side's, and pin this thread
    /// (the server and the run's threads started from it inherit its CPU set).
    pub fn before_server(&self) -> Result<()> {
        if !self.side.started_first {
            self.started.wait();
        }
        if let Some(cpus) = &self.cpus {
            pin_this_thread(cpus)?;
        }
        Ok(())
    }

    /// After this side's server started (or failed to): let the other side start its own.
    pub fn after_server(&self) {
        if self.side.started_first {
            self.started.open();
        }
    }
}

/// Leaves the barrier and opens the gate when a side's thread ends, however it ends.
pub struct LeaveOnDrop<'a>(pub &'a DuetContext<'a>);

impl Drop for LeaveOnDrop<'_> {
    fn drop(&mut self) {
        self.0.started.open();
        self.0.barrier.leave();
    }
}

/// The runner's observer for a duet side: each step waits at the barrier before it starts,
/// and its line is printed as it ends.
pub struct DuetObserver<'a> {
    /// The barrier.
    pub barrier: &'a StepBarrier,
    /// No step lines.
    pub quiet: bool,
    /// `[duet r1 s0]`, before each step line.
    pub tag: String,
}

impl RunObserver for DuetObserver<'_> {
    fn step_starts(&mut self, _index: usize, _plan: &StepPlan) {
        self.barrier.wait();
    }

    fn step_ends(&mut self, record: &StepRecord) {
        if !self.quiet {
            crate::say!("{} {}", self.tag, crate::report::text::step_line(record));
        }
    }
}

/// The CPUs this process may run on.
pub fn allowed_cpus() -> Result<Vec<usize>> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity fills it and reads
    // nothing else.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: `set` is a cpu_set_t of `size` bytes, owned here.
    if unsafe { libc::sched_getaffinity(0, size, &mut set) } != 0 {
        bail!(
            "cannot read this process's CPUs (sched_getaffinity): {}",
            std::io::Error::last_os_error()
        );
    }
    let max = usize::try_from(libc::CPU_SETSIZE).unwrap_or(1024);
    // SAFETY: `set` is initialised and every index is below CPU_SETSIZE.
    Ok((0..max)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

/// The two halves of the CPUs, one per slot (`pin = true`); an error naming the fix when the
/// host has fewer than two.
pub fn cpu_halves() -> Result<[Vec<usize>; 2]> {
    let cpus = allowed_cpus()?;
    if cpus.len() < 2 {
        bail!(
            "pin = true gives each side of a duet its own CPUs, and this process may run on {} CPU: remove pin from the matrix file",
            cpus.len()
        );
    }
    let (a, b) = cpus.split_at(cpus.len() / 2);
    Ok([a.to_vec(), b.to_vec()])
}

/// `0-1`, `3`, `0,2`: a CPU list as taskset prints it.
pub fn cpu_list(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}-{}", cpus[i], cpus[j])
        } else {
            cpus[i].to_string()
        });
        i = j + 1;
    }
    parts.join(",")
}

/// Pin the calling thread to `cpus` (as `taskset -p` does for a process): what it starts
/// afterwards (the server, the run's threads) inherits the set.
fn pin_this_thread(cpus: &[usize]) -> Result<()> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        // SAFETY: `set` is a valid cpu_set_t; CPU_SET ignores indexes past its size.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: pid 0 is the calling thread; `set` is a cpu_set_t of `size` bytes.
    if unsafe { libc::sched_setaffinity(0, size, &set) } != 0 {
        bail!(
            "cannot pin a duet side to CPUs {} (sched_setaffinity): {}; remove pin from the matrix file",
            cpu_list(cpus),
            std::io::Error::last_os_error()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn cpu_lists_read_as_taskset_prints_them() {
        assert_eq!(cpu_list(&[0]), "0");
        assert_eq!(cpu_list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
    }

    /// Two sides of three steps: neither passes step k's barrier before the other finished
    /// step k - 1; a side that leaves early does not hold the other.
    #[test]
    fn the_barrier_holds_each_step_and_lets_go_of_a_side_that_left() {
        let barrier = StepBarrier::new(2);
        let done = [AtomicUsize::new(0), AtomicUsize::new(0)];
        std::thread::scope(|s| {
            for side in 0..2 {
                let (barrier, done) = (&barrier, &done);
                s.spawn(move || {
                    for step in 0..3 {
                        barrier.wait();
                        // The other side finished every step before this one.
                        assert!(done[1 - side].load(Ordering::SeqCst) >= step);
                        if side == 0 {
                            std::thread::sleep(Duration::from_millis(20));
                        }
                        done[side].fetch_add(1, Ordering::SeqCst);
                    }
                    barrier.leave();
                });
            }
        });
        let alone = StepBarrier::new(2);
        alone.leave();
        alone.wait();
    }
}
