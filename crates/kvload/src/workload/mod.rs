//! Workloads: the tests and their commands (`spec`), keys (`keys`) and the distributions
//! they and values are drawn from (`sample`, `values`), datasets, cluster
//! slots and topology, replicas, the staircase ramp; and kvload's own requests as the
//! engine's batches (`batches`).
pub mod batches;
pub mod cluster;
pub mod dataset;
#[cfg(test)]
mod dataset_props;
pub mod keys;
pub mod replicas;
pub mod sample;
pub mod spec;
pub mod staircase;
pub mod topology;
pub mod values;
