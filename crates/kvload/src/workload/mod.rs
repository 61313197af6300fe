//! Workloads: tests and their commands, keys, datasets, cluster slots.
pub mod cluster;
pub mod dataset;
pub mod keys;
pub mod replicas;
pub mod spec;
pub mod staircase;
