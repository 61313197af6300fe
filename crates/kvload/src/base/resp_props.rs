//! Property tests of the RESP reply skipper and value parser (issue 41): every split of a
//! valid stream into reads gives the same replies; hostile bytes never panic, and a reply
//! found never extends past the bytes given (nor needs bytes past its end).

use proptest::collection::vec;
use proptest::prelude::*;

use super::fuzz::{config, resp_hostile, resp_value, splits};
use super::resp::{parse_value, skip, Kind};

/// Reads `stream` in the pieces `cuts` makes, as a connection's buffer fills: the replies
/// `skip` finds (length, kind), and whether it stopped on an error.
fn read_in_pieces(stream: &[u8], cuts: &[usize]) -> (Vec<(usize, Kind)>, bool) {
    let mut got = Vec::new();
    let mut pos = 0;
    for w in splits(stream.len(), cuts).windows(2) {
        let have = &stream[..w[1]];
        loop {
            match skip(&have[pos..]) {
                Ok(Some((n, kind))) => {
                    got.push((n, kind));
                    pos += n;
                }
                Ok(None) => break,
                Err(_) => return (got, true),
            }
        }
    }
    (got, false)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn every_split_of_a_stream_gives_the_same_replies(values in vec(resp_value(true), 1..8), cuts in vec(any::<usize>(), 0..10)) {
        let stream = values.concat();
        let want: Vec<(usize, Kind)> = values.iter().map(|v| skip(v).map(|r| r.expect("a whole value"))).collect::<Result<_, _>>().expect("valid");
        prop_assert_eq!(want.iter().map(|w| w.0).collect::<Vec<_>>(), values.iter().map(Vec::len).collect::<Vec<_>>());
        prop_assert_eq!(read_in_pieces(&stream, &cuts), (want, false));
    }

    #[test]
    fn parse_value_reads_each_whole_value(v in resp_value(false)) {
        let (_, used) = parse_value(&v).expect("a valid value");
        prop_assert_eq!(used, v.len());
    }

    #[test]
    fn hostile_bytes_never_panic_nor_read_past_the_end(b in resp_hostile()) {
        if let Ok(Some((n, _))) = skip(&b) {
            prop_assert!(n > 0 && n <= b.len(), "reply of {} bytes in {}", n, b.len());
            prop_assert_eq!(skip(&b[..n]).ok().flatten().map(|r| r.0), Some(n), "needs no byte past its end");
            for cut in 0..n {
                prop_assert_eq!(skip(&b[..cut]), Ok(None), "a prefix of a reply is incomplete ({})", cut);
            }
        }
        if let Ok((_, n)) = parse_value(&b) {
            prop_assert!(n <= b.len(), "value of {} bytes in {}", n, b.len());
        }
    }
}
