//! Property tests of the URI parser (issue 41): any string in either dialect is parts or a
//! message, never a panic; a URI made of parts reads back as those parts.

use proptest::prelude::*;

use super::fuzz::config;
use super::uri::{parse, Dialect, Uri};

fn dialect() -> impl Strategy<Value = Dialect> {
    prop_oneof![Just(Dialect::Kvload), Just(Dialect::Memtier)]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_string_is_parts_or_a_message(s in "\\PC{0,40}", d in dialect()) {
        let _ = parse(&s, d);
        let _ = parse(&format!("redis://{s}"), d);
    }

    #[test]
    fn uri_shaped_strings_never_panic(s in "(redis|rediss|valkey|http)://([a-z:@\\[\\]]{0,6}@)?(\\[[0-9a-f:]{0,8}\\]|[a-z0-9.:]{0,10})(:[0-9x-]{0,7})?(/[0-9a-z-]{0,12})?", d in dialect()) {
        let _ = parse(&s, d);
    }

    #[test]
    fn a_uri_made_of_parts_reads_back(tls in any::<bool>(), user in proptest::option::of("[a-z]{1,6}(:[a-z0-9]{1,6})?"),
                                      host in "[a-z][a-z0-9.-]{0,12}", port in proptest::option::of(1u16..), db in proptest::option::of(any::<u32>()),
                                      d in dialect()) {
        let scheme = if tls { "rediss" } else { "redis" };
        let mut s = format!("{scheme}://");
        if let Some(u) = &user { s.push_str(&format!("{u}@")); }
        s.push_str(&host);
        if let Some(p) = port { s.push_str(&format!(":{p}")); }
        if let Some(n) = db { s.push_str(&format!("/{n}")); }
        prop_assert_eq!(parse(&s, d), Ok(Uri { tls, userinfo: user, host: Some(host), port, db }));
    }
}
