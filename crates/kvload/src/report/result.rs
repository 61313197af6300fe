//! result: a test's result as kvload reports it (`TestResult`), and what the report says
//! about the run (`RunInfo`): each front end describes its run in these terms.

use crate::engine::stats::{self, Merged, Summary};
use crate::workload::staircase::{Ramp, StepResult};

/// A run as kvload's report shows it: the text header's lines and the JSON's `config`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunInfo {
    pub host: String,
    pub port: u16,
    pub socket: Option<String>,
    pub clients: usize,
    pub threads: usize,
    pub pipeline: usize,
    /// Requests in all (reported when the run is not bound by `duration`).
    pub requests: u64,
    pub duration: Option<f64>,
    pub warmup: f64,
    pub data_size: usize,
    pub keyspace: Option<u64>,
    pub sequential: bool,
    pub seed: Option<u64>,
    /// Open loop: the target rate.
    pub rps: Option<f64>,
    /// Open loop: Poisson arrivals (else a grid).
    pub poisson: bool,
    pub tls: bool,
    pub cluster: bool,
    pub resp3: bool,
    pub dbnum: u32,
    /// The tests as `config.tests` lists them.
    pub tests: Vec<String>,
    pub dataset: Option<String>,
    pub ramp: Option<Ramp>,
    pub keepalive: bool,
    /// HDR histograms' significant figures.
    pub precision: u8,
    pub csv: bool,
    pub quiet: bool,
}

impl Default for RunInfo {
    /// kvload's defaults (`kvload` without options), so a front end names what differs.
    fn default() -> Self {
        RunInfo {
            host: "127.0.0.1".into(),
            port: 6379,
            socket: None,
            clients: 50,
            threads: 1,
            pipeline: 1,
            requests: 100_000,
            duration: None,
            warmup: 0.0,
            data_size: 3,
            keyspace: None,
            sequential: false,
            seed: None,
            rps: None,
            poisson: false,
            tls: false,
            cluster: false,
            resp3: false,
            dbnum: 0,
            tests: Vec::new(),
            dataset: None,
            ramp: None,
            keepalive: true,
            precision: 3,
            csv: false,
            quiet: false,
        }
    }
}

pub struct TestResult {
    pub name: String,
    pub m: Merged,
    pub rps: f64,
    pub corrected: Summary,
    pub service: Summary,
    pub cores_used: f64,
    pub saturated: bool,
    /// --clients-start ...: the results of each step (`staircase`).
    pub steps: Option<Vec<StepResult>>,
}

impl TestResult {
    pub fn new(o: &RunInfo, name: String, m: Merged) -> Self {
        let dur = m.duration_s.max(1e-9);
        let cores_used = (m.user_s + m.sys_s) / dur;
        TestResult {
            name,
            rps: m.requests as f64 / dur,
            corrected: stats::summary(&m.corrected),
            service: stats::summary(&m.service),
            saturated: cores_used >= 0.9 * o.threads as f64,
            cores_used,
            m,
            steps: None,
        }
    }
}

