//! Hostile and damaged input to every reader of the fabric crate (issue 20):
//! never a panic, always an error naming file and line, quoting at most a
//! bounded, escaped excerpt; files replaced atomically.

use ibcloud_fabric::error::{excerpt, EXCERPT_CHARS, MESSAGE_CHARS};
use ibcloud_fabric::formats::{
    guid2lid, lfts_dump, parse_fabric, partitions_conf, write_atomic, write_atomic_with, Format,
};
use ibcloud_fabric::generate;
use proptest::prelude::*;

const FORMATS: [Format; 4] = [
    Format::Ibnetdiscover,
    Format::IbsimNet,
    Format::SubnetLst,
    Format::Native,
];

fn safe(message: &str) -> bool {
    message.chars().count() <= MESSAGE_CHARS + 40 && !message.chars().any(|c| c.is_control())
}

#[test]
fn excerpt_is_bounded_and_escaped() {
    assert_eq!(excerpt("0x1 2"), "'0x1 2'");
    assert_eq!(excerpt("a\u{1b}]0;x\u{7}"), "'a\\x1b]0;x\\x07'");
    let long = "A".repeat(50 << 20);
    let quoted = excerpt(&long);
    assert!(quoted.len() < EXCERPT_CHARS + 40, "{}", quoted.len());
    assert!(quoted.ends_with("... (52,428,800 characters)"));
}

#[test]
fn a_huge_line_with_escapes_gives_a_short_safe_message() {
    let mut text = String::from("\u{1b}[2J");
    text.push_str(&"x".repeat(5 << 20));
    text.push('\n');
    for format in [Format::Ibnetdiscover, Format::IbsimNet, Format::SubnetLst] {
        let e = parse_fabric(text.as_bytes(), "evil", format)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("evil:1:"), "{format:?}: {e}");
        assert!(safe(&e) && e.len() < 400, "{format:?}: {} bytes", e.len());
    }
}

#[test]
fn empty_and_comment_only_files_are_not_fabrics() {
    for format in [Format::Ibnetdiscover, Format::IbsimNet, Format::SubnetLst] {
        for text in ["", "\n\n", "# nothing\n"] {
            let e = parse_fabric(text.as_bytes(), "e", format)
                .unwrap_err()
                .to_string();
            assert!(e.contains("no nodes"), "{format:?} {text:?}: {e}");
        }
    }
}

#[test]
fn byte_order_mark_is_not_content_and_bad_bytes_are_located() {
    let f = generate::preset("4-ary-2-full").unwrap().build().unwrap();
    for format in [Format::Ibnetdiscover, Format::IbsimNet] {
        let mut bytes = b"\xef\xbb\xbf".to_vec();
        bytes.extend(ibcloud_fabric::formats::render_fabric(&f, format).unwrap());
        assert!(parse_fabric(&bytes, "bom", format).is_ok(), "{format:?}");
        let at = bytes.iter().skip(200).position(|&b| b == b'\n').unwrap() + 201;
        let mut bad = bytes.clone();
        bad.insert(at, 0xff);
        let e = parse_fabric(&bad, "bad", format).unwrap_err().to_string();
        assert!(e.contains("not UTF-8 text: byte 0xff at column 1"), "{e}");
        let mut nul = bytes.clone();
        nul.insert(at, 0);
        let e = parse_fabric(&nul, "nul", format).unwrap_err().to_string();
        assert!(e.contains("NUL byte"), "{e}");
    }
}

#[test]
fn partitions_conf_refuses_wide_keys_truncation_and_empty_files() {
    let cases = [
        (
            "Default=0x7fff : ALL ;\nbig=99999999999999999999 : ALL ;\n",
            "above 0xFFFF",
        ),
        (
            "Default=0x7fff : ALL ;\nbig=0x10000 : ALL ;\n",
            "above 0xFFFF",
        ),
        (
            "Default=0x7fff : ALL ;\ncut=0x8002 : 0x10",
            "no closing ';'",
        ),
        ("", "the file is empty"),
        ("  \n\t\n", "the file is empty"),
    ];
    for (text, problem) in cases {
        let e = partitions_conf::parse(text, "p.conf")
            .unwrap_err()
            .to_string();
        assert!(e.contains(problem), "{text:?}: {e}");
    }
    // comments only: an empty configuration, as ibcloud writes it
    assert!(partitions_conf::parse("# none\n", "p.conf").is_ok());
    assert!(partitions_conf::parse("Default=0xffff : ALL ;\n", "p.conf").is_ok());
}

#[test]
fn lft_dump_stream_matches_the_whole_file_reader_and_refuses_damage() {
    let f = generate::preset("4-ary-2-full").unwrap().build().unwrap();
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/interop/fdbs/4-ary-2-full-minhop/opensm-lfts.dump"
    ))
    .unwrap();
    let whole = lfts_dump::parse(&text, "d").unwrap().to_tables(&f).unwrap();
    let streamed = lfts_dump::read_tables(text.as_bytes(), "d", &f).unwrap();
    assert_eq!(whole, streamed);
    let damaged: Vec<(Vec<u8>, &str)> = vec![
        (Vec::new(), "empty LFT dump"),
        (
            text.trim_end()
                .rsplit_once('\n')
                .unwrap()
                .0
                .as_bytes()
                .to_vec(),
            "truncated file?",
        ),
        ([b"\xff".as_slice(), text.as_bytes()].concat(), "not UTF-8"),
        (
            [text.as_bytes(), &vec![b'A'; lfts_dump::MAX_LINE + 5]].concat(),
            "line longer than",
        ),
        (
            text.replacen("portguid 0x0", "portguid 0xf", 1)
                .into_bytes(),
            "not a port of the fabric",
        ),
    ];
    for (bytes, problem) in damaged {
        let e = lfts_dump::read_tables(&bytes[..], "d", &f)
            .unwrap_err()
            .to_string();
        assert!(e.contains(problem) && safe(&e), "{problem}: {e}");
    }
}

#[test]
fn atomic_writes_keep_the_old_file_when_the_writer_fails() {
    let dir = std::env::temp_dir().join(format!("ibcloud-atomic-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("opensm-lfts.dump");
    write_atomic(&path, b"good\n").unwrap();
    let failed = write_atomic_with(&path, |w| {
        w.write_all(b"half")?;
        Err(std::io::Error::other("killed"))
    });
    assert!(failed.is_err());
    assert_eq!(std::fs::read(&path).unwrap(), b"good\n");
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("opensm-lfts.dump")]);
    std::fs::remove_dir_all(&dir).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn readers_never_panic_and_messages_stay_safe(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        for format in FORMATS {
            if let Err(e) = parse_fabric(&bytes, "fuzz", format) {
                let m = e.to_string();
                prop_assert!(m.starts_with("fuzz") && safe(&m), "{:?}: {}", format, m);
            }
        }
        if let Ok(text) = std::str::from_utf8(&bytes) {
            if let Err(e) = guid2lid::parse(text, "fuzz") {
                prop_assert!(safe(&e.to_string()));
            }
            if let Err(e) = partitions_conf::parse(text, "fuzz") {
                prop_assert!(e.line >= 1);
            }
        }
        let f = generate::preset("4-ary-2-full").unwrap().build().unwrap();
        if let Err(e) = lfts_dump::read_tables(&bytes[..], "fuzz", &f) {
            prop_assert!(safe(&e.to_string()));
        }
    }
}
