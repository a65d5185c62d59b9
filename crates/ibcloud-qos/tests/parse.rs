//! Policy files: presets as bases, every limit with its line, and a
//! property test that the parser never panics and reports a line inside
//! the file.

use ibcloud_qos::{opensm, parse_policy, CcSls, PortClass, PortMask, Preset};
use proptest::prelude::*;

fn err(text: &str) -> ibcloud_qos::QosError {
    parse_policy("p.toml", text).expect_err("must be refused")
}

#[test]
fn a_preset_file_equals_the_preset() {
    let p = parse_policy("stmaxq.toml", "preset = \"StMaxQ\"\n").unwrap();
    let want = Preset::StMaxQ.policy(CcSls::All);
    assert_eq!((p.qos, p.cc), (want.qos, want.cc));
    let bulk = parse_policy("b.toml", "preset = \"stmax\"\ncc-sls = \"bulk\"\n").unwrap();
    assert_eq!(bulk.cc.unwrap().ca.control_map, 0xFFFE);
}

#[test]
fn overrides_apply_on_top_of_a_preset() {
    let text = r#"
preset = "stmax"
[qos]
vlarb-low = "0:8,1:32"
[qos.ca]
high-limit = 4
vlarb-high = [[0, 16]]
[cc]
cct = [[0, 0], [1, 100], "2:300"]
ccti-limit = 2
[cc.switch]
victim-mask = [1, 2, 2, 36]
[cc.ca]
ccti-min = 1
[[cc.ca.sl]]
sl = 1
ccti-increase = 20
"#;
    let p = parse_policy("o.toml", text).unwrap();
    let q = p.qos.unwrap();
    assert_eq!(q.default.vlarb_low[0].weight, 8);
    let ca = q.effective(PortClass::Ca);
    assert_eq!((ca.high_limit, ca.vlarb_high[0].weight), (4, 16));
    assert_eq!(q.effective(PortClass::Swe).high_limit, 0);
    let cc = p.cc.unwrap();
    assert_eq!(cc.ccti_limit(), 2);
    assert_eq!(cc.cct[2].multiplier, 300);
    assert_eq!(cc.switch.victim_mask, PortMask::Ports(vec![1, 2, 36]));
    assert_eq!(cc.ca.entries[0].ccti_min, 1);
    assert_eq!(cc.ca.entries[1].ccti_increase, 20);
    assert_eq!(cc.ca.entries[0].ccti_increase, 10);
    assert!(opensm::opensm_conf(&ibcloud_qos::Policy {
        name: "o".into(),
        qos: Some(q),
        cc: Some(cc)
    })
    .is_ok());
}

#[test]
fn a_file_without_preset_starts_from_opensm_defaults() {
    let p = parse_policy("q.toml", "[qos]\nmax-vls = 4\nvlarb-low = \"0:1,3:2\"\nvlarb-high = \"0:0\"\nsl2vl = [0,1,2,3,0,1,2,3,0,1,2,3,0,1,2,15]\n").unwrap();
    let q = p.qos.unwrap();
    assert_eq!(q.default.max_vls, 4);
    assert!(p.cc.is_none());
}

#[test]
fn every_limit_is_refused_with_file_line_and_problem() {
    let cases: &[(&str, usize, &str)] = &[
        (
            "preset = \"stmax\"\n[qos]\nvlarb-low = \"0:256,1:1\"\n",
            3,
            "weight 256",
        ),
        (
            "preset = \"stmax\"\n[qos]\n\nvlarb-low = [[0, 32], [15, 1]]\n",
            4,
            "VL 15",
        ),
        (
            "preset = \"stmax\"\n[qos]\nvlarb-low = [[0, 32], [2, 1]]\n",
            3,
            "VL 2",
        ),
        (
            "preset = \"stmax\"\n[qos]\nsl2vl = [0, 1]\n",
            3,
            "2 entries",
        ),
        (
            "preset = \"stmax\"\n[qos]\nsl2vl = [0,1,1,1,1,1,1,1,1,1,1,1,1,1,1,16]\n",
            3,
            "VL 16",
        ),
        (
            "preset = \"stmax\"\n[qos]\nsl2vl = [0,1,1,1,1,1,1,1,1,1,1,1,1,1,1,3]\n",
            3,
            "SL 15 maps to VL 3",
        ),
        ("preset = \"stmax\"\n[qos]\nmax-vls = 16\n", 3, "1-15"),
        ("preset = \"stmax\"\n[qos]\nhigh-limit = 300\n", 3, "0-255"),
        ("preset = \"stmax\"\n[qos.ca]\nmax-vls = 1\n", 3, "VL 1"),
        ("preset = \"stmax\"\n[qos]\nbogus = 1\n", 3, "unknown field"),
        (
            "preset = \"stmax\"\n[cc]\ncct = \"0:0,4:1\"\n",
            3,
            "shift 4",
        ),
        (
            "preset = \"stmax\"\n[cc]\ncct = \"0:0,0:16384\"\n",
            3,
            "multiplier 16384",
        ),
        ("preset = \"stmax\"\n[cc]\nccti-limit = 100\n", 3, "127"),
        (
            "preset = \"stmax\"\n[cc.switch]\nthreshold = 16\n",
            3,
            "0-15",
        ),
        (
            "preset = \"stmax\"\n[cc.switch]\nvictim-mask = [255]\n",
            3,
            "reserved",
        ),
        (
            "preset = \"stmax\"\n[cc.ca]\nccti-increase = 256\n",
            3,
            "0-255",
        ),
        (
            "preset = \"stmax\"\n[cc.ca]\nport-control = \"vm\"\n",
            3,
            "port-control",
        ),
        ("preset = \"nope\"\n", 1, "stmax"),
        ("[cc]\nmax-outstanding-mads = 4\n", 1, "cct"),
        ("cc-sls = \"all\"\n[qos]\n", 1, "preset"),
        ("", 0, "nothing to configure"),
        ("[qos\n", 1, ""),
    ];
    for &(text, line, needle) in cases {
        let e = err(text);
        assert_eq!(e.file, "p.toml");
        if line > 0 {
            assert_eq!(e.line, Some(line), "{text:?}: {e}");
        }
        assert!(e.to_string().contains(needle), "{text:?}: {e}");
    }
    // 65 entries: longer than the two 32-entry blocks.
    let long: Vec<String> = (0..65).map(|_| "0:1".to_string()).collect();
    let e = err(&format!(
        "preset = \"stmax\"\n[qos]\nvlarb-low = \"{}\"\n",
        long.join(",")
    ));
    assert!(
        e.to_string().contains("at most 64") && e.line == Some(3),
        "{e}"
    );
    // 129 CCT entries.
    let long: Vec<String> = (0..129).map(|_| "0:1".to_string()).collect();
    let e = err(&format!(
        "preset = \"stmax\"\n[cc]\ncct = \"{}\"\n",
        long.join(",")
    ));
    assert!(
        e.to_string().contains("at most 128") && e.line == Some(3),
        "{e}"
    );
    // CCTI_Min above the limit a short table implies.
    let e = err("preset = \"stmax\"\n[cc]\ncct = \"0:0,0:5\"\n");
    assert!(e.to_string().contains("CCTI_Min 10"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Arbitrary text: no panic; an error's line lies inside the file.
    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        if let Err(e) = parse_policy("f.toml", &text) {
            let lines = text.split('\n').count();
            prop_assert!(e.line.is_none_or(|l| l >= 1 && l <= lines));
        }
    }

    /// Well-formed files with random numbers: accepted exactly when every
    /// number is inside the IBA range, and then written for OpenSM.
    #[test]
    fn numbers_are_accepted_iff_in_range(
        w0 in -5i64..300, w1 in -5i64..300, vl in -2i64..17, hl in -5i64..300,
        shift in -1i64..6, mult in -5i64..17_000, thr in -2i64..20,
    ) {
        let text = format!(
            "preset = \"stmax\"\n[qos]\nmax-vls = 2\nhigh-limit = {hl}\nvlarb-low = [[0, {w0}], [{vl}, {w1}]]\n[cc]\ncct = \"0:0,{shift}:{mult}\"\n[cc.switch]\nthreshold = {thr}\n[cc.ca]\nccti-min = 0\n"
        );
        let ok = (0..=255).contains(&w0) && (0..=255).contains(&w1) && (0..=1).contains(&vl)
            && (0..=255).contains(&hl) && (0..=3).contains(&shift) && (0..=16_383).contains(&mult)
            && (0..=15).contains(&thr);
        match parse_policy("n.toml", &text) {
            Ok(p) => {
                prop_assert!(ok, "accepted out-of-range input:\n{text}");
                let conf = opensm::opensm_conf(&p).unwrap();
                let low = format!("qos_vlarb_low 0:{w0},{vl}:{w1}");
                prop_assert!(conf.contains(&low));
            }
            Err(e) => {
                prop_assert!(!ok, "refused in-range input: {e}\n{text}");
                prop_assert!(e.line.is_some());
            }
        }
    }
}
