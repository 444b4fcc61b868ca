//! The DBMS's own counters per step, declared once: the table in [`dbms_counters!`] gives
//! each counter's field of `DbmsMetrics` (`run.json`'s `steps[].metrics.dbms`), its n/a in
//! `DbmsMetrics::all_na`, its entry of `METRICS` (`DBMS_METRICS`), what the sampler divides
//! it by ([`Per`]) and its row of docs/results.md (a unit test in `metrics` compares the
//! two). Adding a counter is one row here and its computation in `sampler::dbms`. The
//! macro is expanded in `results::metrics`, beside the types it fills, so that this file
//! imports nothing.

/// What a counter's change over the step is divided by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Per {
    /// The step's ops (`…pq`).
    Op,
    /// The rows the step inserted, the background writers' included (`…pi`).
    Row,
    /// Nothing: a figure of the whole step, or a level at its end.
    Step,
}

impl Per {
    /// A per-op or per-row figure is a cost that can explain a throughput change: a
    /// candidate of the diagnosis. A figure per step is not.
    pub const fn is_cost(self) -> bool {
        !matches!(self, Per::Step)
    }
}

/// Which way a counter is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    /// Less is better (a cost).
    Lower,
    /// More is better.
    Higher,
}

/// The DBMS counters, one row each: its key (the field and the name in run.json), unit,
/// source, what it is divided by, which way is better, its decimals in the terminal, its
/// short label and its meaning (the field's doc, the report's and the docs' text). Expanded
/// once, in `results::metrics` (`dbms_counters!()`), into `DbmsMetrics`, its `all_na` and
/// `figures_mut`, `DBMS_COUNTERS` and `DBMS_METRICS`; the names it uses (`Metric`,
/// `MetricDef`, `Source`, `dbms_shown`, serde) are that module's.
macro_rules! dbms_counters {
    () => {
        $crate::results::counters::dbms_counters! {
            @table
            // key unit source per better decimals "short label"
            //     "meaning"
            walbpi "bytes/row" Postgres Row Lower 1 "WAL bytes/row"
                "WAL bytes per inserted row: the advance of the WAL insert position over the step, every record of the cluster";
            fpipi "FPIs/row" Postgres Row Lower 4 "full-page images/row"
                "full-page images written to WAL per inserted row (pg_stat_wal, PostgreSQL 14 and later)";
            shrpq "blocks/op" Postgres Op Lower 3 "buffer reads/op"
                "shared-buffer misses per op: blocks read into shared buffers in the run's database (pg_stat_database blks_read)";
            shhpq "blocks/op" Postgres Op Lower 2 "buffer hits/op"
                "shared-buffer hits per op in the run's database (pg_stat_database blks_hit)";
            iorpq "reads/op" Postgres Op Lower 3 "client backend reads/op"
                "reads per op by client backends (pg_stat_io, PostgreSQL 16 and later)";
            iowpq "writes/op" Postgres Op Lower 3 "client backend writes/op"
                "writes per op by client backends (pg_stat_io): dirty buffers they had to write themselves";
            ioxpq "extends/op" Postgres Op Lower 4 "client backend extends/op"
                "relation extends per op by client backends (pg_stat_io)";
            iofpq "fsyncs/op" Postgres Op Lower 4 "client backend fsyncs/op"
                "fsyncs per op by client backends (pg_stat_io)";
            bgiorpq "reads/op" Postgres Op Lower 3 "other backends' reads/op"
                "reads per op by every other backend type: autovacuum, checkpointer, background writer and the rest (pg_stat_io)";
            bgiowpq "writes/op" Postgres Op Lower 3 "other backends' writes/op"
                "writes per op by every other backend type (pg_stat_io)";
            bgioxpq "extends/op" Postgres Op Lower 4 "other backends' extends/op"
                "relation extends per op by every other backend type (pg_stat_io)";
            bgiofpq "fsyncs/op" Postgres Op Lower 4 "other backends' fsyncs/op"
                "fsyncs per op by every other backend type (pg_stat_io)";
            ckpts "checkpoints" Postgres Step Lower 0 "checkpoints"
                "checkpoints in the step (pg_stat_checkpointer from 17, pg_stat_bgwriter before)";
            ckbufs "buffers" Postgres Step Lower 0 "checkpoint buffers"
                "buffers written by checkpoints in the step";
            avacs "runs" Postgres Step Lower 0 "autovacuum runs"
                "autovacuum runs on the run's tables in the step (pg_stat_user_tables)";
            deadtup "rows" Postgres Step Lower 0 "dead rows"
                "dead rows in the run's tables at step end (pg_stat_user_tables n_dead_tup)";
            rowspq "rows/op" Mysql Op Lower 2 "rows read/op"
                "rows read per op (Innodb_rows_read; MariaDB's Rows_read, every engine; Rocksdb_rows_read)";
            redobpi "bytes/row" Innodb Row Lower 1 "redo bytes/row"
                "InnoDB redo log bytes per inserted row (Innodb_os_log_written)";
            bprpq "pages/op" Innodb Op Lower 3 "buffer pool reads/op"
                "InnoDB pages read from disk into the buffer pool per op (Innodb_buffer_pool_reads)";
            idrpq "reads/op" Innodb Op Lower 3 "InnoDB data reads/op"
                "InnoDB data file reads per op (Innodb_data_reads)";
            idwpi "writes/row" Innodb Row Lower 3 "InnoDB data writes/row"
                "InnoDB data file writes per inserted row (Innodb_data_writes, the doublewrite buffer's included)";
            idwkbpi "KB/row" Innodb Row Lower 3 "InnoDB data KB written/row"
                "KB InnoDB wrote to its data files per inserted row (Innodb_data_written)";
            hll "undo logs" Innodb Step Lower 0 "history list length"
                "InnoDB history list length at step end (undo not yet purged)";
            rbwpi "bytes/row" Rocksdb Row Lower 1 "MyRocks bytes written/row"
                "bytes written into MyRocks per inserted row (Rocksdb_bytes_written)";
            rflbpi "bytes/row" Rocksdb Row Lower 1 "MyRocks flush bytes/row"
                "bytes MyRocks flushed from memtables to files per inserted row (Rocksdb_flush_write_bytes)";
            rcrbpi "bytes/row" Rocksdb Row Lower 1 "compaction bytes read/row"
                "bytes MyRocks compaction read per inserted row (Rocksdb_compact_read_bytes)";
            rcwbpi "bytes/row" Rocksdb Row Lower 1 "compaction bytes written/row"
                "bytes MyRocks compaction wrote per inserted row (Rocksdb_compact_write_bytes)";
            stalls "s" Rocksdb Step Lower 3 "write stall seconds"
                "seconds MyRocks stalled writes in the step (Rocksdb_stall_micros)";
        }
    };
    (@table $(
        $key:ident $unit:literal $source:ident $per:ident $better:ident $decimals:literal
            $short:literal $meaning:literal;
    )*) => {
        /// The DBMS's own counters over one step, per op, per inserted row or per step:
        /// `run.json`'s `steps[].metrics.dbms`. Read over SQL before and after the step's
        /// measured part, so a server on another host has them too. A figure of another DBMS
        /// or engine is n/a.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        pub struct DbmsMetrics {
            /// The counters read: each one's change over the step (by its view and column, or
            /// its status variable), and the levels at step end (named `… at step end`).
            pub counters: BTreeMap<String, f64>,
            $(
                #[doc = $meaning]
                pub $key: Metric,
            )*
        }

        impl DbmsMetrics {
            /// Every figure n/a with `reason`, no counters.
            pub fn all_na(reason: &str) -> DbmsMetrics {
                DbmsMetrics {
                    counters: BTreeMap::new(),
                    $($key: Metric::na(reason),)*
                }
            }

            /// Every figure with what it is divided by, in the table's order.
            pub fn figures_mut(
                &mut self,
            ) -> [($crate::results::counters::Per, &mut Metric); DBMS_COUNTERS] {
                [$(($crate::results::counters::Per::$per, &mut self.$key),)*]
            }
        }

        /// How many DBMS counters there are.
        pub const DBMS_COUNTERS: usize = [$(stringify!($key),)*].len();

        /// Every DBMS counter's entry of [`METRICS`], in the table's order.
        const DBMS_METRICS: [MetricDef; DBMS_COUNTERS] = [$(
            MetricDef {
                name: stringify!($key),
                unit: $unit,
                meaning: $meaning,
                short: $short,
                decimals: $decimals,
                lower_is_better: matches!(
                    $crate::results::counters::Better::$better,
                    $crate::results::counters::Better::Lower
                ),
                shown: dbms_shown($crate::results::counters::Per::$per),
                source: Source::$source,
                get: |m| m.dbms.$key.clone(),
            },
        )*];
    };
}

pub(crate) use dbms_counters;
