//! batches: kvload's own requests as the engine's `Batches` — instances of a test's
//! pre-encoded template, their `__rand_int__` digits and `{tag}`s patched in place per
//! batch (keys routed to the connection's node in cluster mode), or with `--dataset`
//! written from dataset rows.

use std::sync::Arc;

use crate::engine::source::{Batches, Target};
use crate::workload::dataset::DataPlan;
use crate::workload::keys::{patch_rand, patch_rand_routed, patch_tags, KeyGen};
use crate::workload::spec::Template;
use crate::workload::values::VarTemplate;

/// A test's requests: its template, the cluster's tag per slot, and with `--dataset` the
/// rows that fill the command instead.
#[derive(Clone)]
pub struct TemplateBatches {
    pub template: Arc<Template>,
    /// Cluster mode: a `{tag}` per slot (empty otherwise).
    pub tags: Arc<Vec<[u8; 3]>>,
    pub dataset: Option<Arc<DataPlan>>,
    /// Values or TTLs drawn per instance (`--value-size` not fixed, `--ttl` a range).
    pub var: Option<Arc<VarTemplate>>,
}

impl Batches for TemplateBatches {
    type Keys = KeyGen;

    fn commands(&self) -> usize {
        self.template.ncmds
    }

    fn instance_len(&self) -> usize {
        self.template.bytes.len()
    }

    fn buffer(&self, pipeline: usize) -> Vec<u8> {
        match &self.dataset {
            Some(d) => vec![0u8; pipeline * d.t.max_len()],
            None => match &self.var {
                Some(v) => vec![0u8; pipeline * v.max_len],
                None => self.template.bytes.repeat(pipeline),
            },
        }
    }

    #[inline]
    fn write(&self, keys: &mut KeyGen, buf: &mut [u8], count: usize, to: &Target) -> usize {
        if let Some(d) = &self.dataset {
            return d.fill(buf, count, keys);
        }
        if let Some(v) = &self.var {
            return v.fill(buf, &self.template, count, keys);
        }
        let t = &self.template;
        if to.sampled {
            patch_rand_routed(buf, t, count, keys, to.owner, to.shard, to.max_tries);
        } else {
            patch_rand(buf, t, count, keys);
        }
        if !t.tags.is_empty() && !to.slots.is_empty() {
            let slot = to.slots[keys.rng.below(to.slots.len() as u64) as usize];
            patch_tags(buf, t, count, &self.tags[slot as usize]);
        }
        count * t.bytes.len()
    }

    fn span(&self, idx: usize) -> (usize, usize) {
        let s = &self.template.cmd_starts;
        (s[idx] as usize, s[idx + 1] as usize)
    }

    fn set_lanes(&self, keys: &mut KeyGen, lanes: usize) {
        keys.set_lanes(lanes);
    }

    fn carry_lane(&self, keys: &mut KeyGen, from: usize, to: usize) {
        keys.carry_lane(from, to);
    }
}
