//! Property tests of `--dataset` CSV reading (issue 41): any bytes are a dataset or a
//! message, never a panic; any table written as CSV (RFC 4180 quoting) reads back cell for
//! cell; every row's request fits the template's `max_len` (the engine's buffers are sized
//! by it).

use proptest::collection::vec;
use proptest::prelude::*;

use crate::base::fuzz::config;
use crate::workload::dataset::{DataTemplate, Dataset};
use crate::workload::keys::KeyGen;
use crate::workload::spec::custom;

/// A cell as CSV: quoted when it holds a quote, a comma or a line end (or is empty).
fn csv_cell(c: &[u8]) -> Vec<u8> {
    if c.is_empty() || c.iter().any(|b| matches!(b, b'"' | b',' | b'\n' | b'\r')) {
        let mut out = vec![b'"'];
        c.iter().for_each(|&b| if b == b'"' { out.extend_from_slice(b"\"\"") } else { out.push(b) });
        out.push(b'"');
        out
    } else {
        c.to_vec()
    }
}

/// A table: column names c0.., then 1-6 rows of `cols` cells.
fn table() -> impl Strategy<Value = (Vec<Vec<u8>>, Vec<Vec<Vec<u8>>>)> {
    (1usize..5).prop_flat_map(|cols| {
        let head: Vec<Vec<u8>> = (0..cols).map(|i| format!("c{i}").into_bytes()).collect();
        (Just(head), vec(vec(vec(any::<u8>(), 0..10), cols), 1..6))
    })
}

fn to_csv(head: &[Vec<u8>], rows: &[Vec<Vec<u8>>], crlf: bool) -> Vec<u8> {
    let line = |r: &[Vec<u8>]| r.iter().map(|c| csv_cell(c)).collect::<Vec<_>>().join(&b","[..]);
    let mut out = line(head);
    for r in rows {
        out.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
        out.extend(line(r));
    }
    out
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_bytes_are_a_dataset_or_a_message(b in vec(any::<u8>(), 0..300)) {
        if let Ok(d) = Dataset::parse(&b) {
            prop_assert!(d.rows() >= 1 && !d.columns.is_empty());
        }
    }

    #[test]
    fn a_table_reads_back_cell_for_cell((head, rows) in table(), crlf in any::<bool>(), end in any::<bool>()) {
        let mut text = to_csv(&head, &rows, crlf);
        if end { text.push(b'\n'); }
        let d = Dataset::parse(&text).map_err(TestCaseError::fail)?;
        prop_assert_eq!(d.rows(), rows.len());
        for (i, r) in rows.iter().enumerate() {
            for (k, c) in r.iter().enumerate() {
                prop_assert_eq!(d.cell(i, k), c.as_slice());
            }
        }
    }

    #[test]
    fn every_row_fits_max_len((head, rows) in table(), randomize in any::<bool>()) {
        let d = Dataset::parse(&to_csv(&head, &rows, false)).map_err(TestCaseError::fail)?;
        let last = head.len() - 1;
        let line = format!("HSET k:__field:c0__:__rand_int__ f __field:c{last}____field:c0__ x");
        let t = DataTemplate::compile(&custom(&[line], 3).map_err(TestCaseError::fail)?, &d, randomize).map_err(TestCaseError::fail)?;
        let mut keys = KeyGen::new(1, 10, false, 0, 1);
        for row in 0..d.rows() {
            let mut out = vec![0u8; t.max_len()];
            prop_assert!(t.write(&d, row, &mut out, &mut keys, 1000) <= t.max_len());
        }
    }
}
