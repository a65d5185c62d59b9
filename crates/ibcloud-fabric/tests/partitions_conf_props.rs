//! Property tests for the partitions.conf reader and writer: write → read
//! gives the same configuration, and no input makes the reader panic.

use ibcloud_fabric::formats::partitions_conf::{parse, parse_with_warnings, write};
use ibcloud_fabric::partitions::{
    GlobalPolicy, Isolation, Member, MemberSpec, Membership, Partition, PartitionConfig,
};
use ibcloud_fabric::Guid;
use proptest::prelude::*;

fn membership() -> impl Strategy<Value = Option<Membership>> {
    prop_oneof![
        Just(None),
        Just(Some(Membership::Full)),
        Just(Some(Membership::Limited)),
        Just(Some(Membership::Both)),
    ]
}

fn member() -> impl Strategy<Value = Member> {
    let spec = prop_oneof![
        (1u64..).prop_map(|g| MemberSpec::Guid(Guid(g))),
        Just(MemberSpec::All),
        Just(MemberSpec::AllCas),
        Just(MemberSpec::AllSwitches),
        Just(MemberSpec::AllRouters),
        Just(MemberSpec::SelfPort),
    ];
    (spec, membership()).prop_map(|(spec, membership)| Member {
        spec,
        membership,
        line: 0,
    })
}

fn partition() -> impl Strategy<Value = Partition> {
    (
        "[a-zA-Z_][a-zA-Z0-9_.-]{0,10}",
        proptest::option::of(1u16..0x7FFF),
        proptest::option::of(prop_oneof![
            Just(Membership::Full),
            Just(Membership::Limited),
            Just(Membership::Both)
        ]),
        any::<bool>(),
        proptest::option::of(0u8..16),
        proptest::option::of(prop_oneof![
            Just(Isolation::Phy),
            Just(Isolation::Vlane),
            Just(Isolation::Def)
        ]),
        proptest::collection::vec(
            prop_oneof![
                Just(("mtu".to_owned(), Some("4".to_owned()))),
                Just(("rate".to_owned(), Some("3".to_owned()))),
                Just(("indx0".to_owned(), None)),
            ],
            0..3,
        ),
        proptest::collection::vec("ff12:401b::[0-9a-f]{1,4}(,sl=[0-9])?", 0..2),
        proptest::collection::vec(member(), 0..12),
    )
        .prop_map(
            |(name, pkey, defmember, ipoib, sl, isolation, other_flags, mgroups, members)| {
                Partition {
                    name,
                    pkey,
                    defmember,
                    ipoib,
                    sl,
                    isolation,
                    other_flags,
                    mgroups,
                    members,
                    line: 0,
                }
            },
        )
}

fn config() -> impl Strategy<Value = PartitionConfig> {
    (
        proptest::collection::vec(partition(), 0..6),
        proptest::option::of(prop_oneof![
            Just(GlobalPolicy::Strict),
            Just(GlobalPolicy::BestEffort)
        ]),
    )
        .prop_map(|(mut partitions, global)| {
            // P_Keys are unique (equal ones merge, as in OpenSM).
            let mut seen = std::collections::HashSet::new();
            for p in &mut partitions {
                if let Some(k) = p.pkey {
                    if !seen.insert(k) {
                        p.pkey = None;
                    }
                }
            }
            let global = if partitions.is_empty() { None } else { global };
            PartitionConfig { partitions, global }
        })
}

fn without_lines(mut c: PartitionConfig) -> PartitionConfig {
    for p in &mut c.partitions {
        p.line = 0;
        for m in &mut p.members {
            m.line = 0;
        }
    }
    c
}

proptest! {
    #[test]
    fn write_then_read_is_identity(conf in config()) {
        let mut out = Vec::new();
        write(&conf, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let back = parse(&text, "p.conf").map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(without_lines(back), conf);
    }

    #[test]
    fn never_panics_on_arbitrary_text(text in "\\PC{0,200}") {
        let _ = parse_with_warnings(&text, "p.conf");
    }

    #[test]
    fn never_panics_on_near_miss_syntax(text in "[a-zA-Z0-9=,:; #\\n\\t_x.-]{0,120}") {
        if let Err(e) = parse(&text, "p.conf") {
            prop_assert!(e.line >= 1 && e.column >= 1);
        }
    }
}
