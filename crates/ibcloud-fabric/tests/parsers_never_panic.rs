//! The ibnetdiscover and ibsim readers never panic: arbitrary text, token soup
//! and mutated valid files give a fabric or an error that starts with
//! `file:line:` (line ≥ 1), so users always learn where the problem is.

use ibcloud_fabric::formats::{ibnetdiscover, ibsim};
use ibcloud_fabric::generate::{preset, FatTreeParams};
use ibcloud_fabric::Fabric;
use proptest::prelude::*;
use std::sync::OnceLock;

/// Valid inputs to mutate: the real-tool fixtures and both writers' output.
fn samples() -> &'static [String] {
    static SAMPLES: OnceLock<Vec<String>> = OnceLock::new();
    SAMPLES.get_or_init(|| {
        let mut out = vec![
            include_str!("../../../fixtures/interop/ibsim-example.net").to_owned(),
            include_str!("../../../fixtures/interop/ibnetdiscover-example.txt").to_owned(),
        ];
        let small = preset("4-ary-2-full").unwrap().build().unwrap();
        let parallel = FatTreeParams::pgft(&[2, 2], &[1, 2], &[1, 2])
            .build()
            .unwrap();
        for f in [&small, &parallel] {
            let mut topo = Vec::new();
            ibnetdiscover::write(f, &mut topo).unwrap();
            let mut net = Vec::new();
            ibsim::write(f, &mut net).unwrap();
            out.push(String::from_utf8(topo).unwrap());
            out.push(String::from_utf8(net).unwrap());
        }
        out
    })
}

/// Whether `msg` is `name:N: problem` with N ≥ 1.
fn names_file_and_line(msg: &str, name: &str) -> bool {
    let Some(rest) = msg.strip_prefix(name).and_then(|r| r.strip_prefix(':')) else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0
        && rest[digits..].starts_with(": ")
        && rest[..digits].parse::<usize>().is_ok_and(|n| n >= 1)
}

fn check_both(text: &str) -> Result<(), TestCaseError> {
    type Parser = fn(&str, &str) -> Result<Fabric, ibcloud_fabric::FabricError>;
    let parsers: [(&str, Parser); 2] =
        [("in.topo", ibnetdiscover::parse), ("in.net", ibsim::parse)];
    for (name, parse) in parsers {
        if let Err(e) = parse(text, name) {
            let msg = e.to_string();
            prop_assert!(
                names_file_and_line(&msg, name),
                "error without file:line: {msg}"
            );
        }
    }
    Ok(())
}

#[derive(Clone, Debug)]
enum Mutation {
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    ReplaceLine(usize, String),
    DeleteChar(usize),
    InsertChar(usize, char),
    ReplaceChar(usize, char),
    Truncate(usize),
}

/// Characters that matter to the grammars, and anything else now and then.
fn interesting_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => proptest::sample::select(vec!['"', '[', ']', '(', ')', '#', '\n', '\t', ' ', '=', '+', '@', '0', '9', 'x', 'f', '?', '-']),
        1 => any::<char>(),
    ]
}

const TOKENS: &[&str] = &[
    "Switch",
    "Ca",
    "Hca",
    "Rt",
    "\t",
    " ",
    "\n",
    "\"",
    "[",
    "]",
    "(",
    ")",
    "#",
    "lid",
    "lmc",
    "0x",
    "1",
    "8",
    "36",
    "255",
    "0",
    "switchguid=",
    "caguid=",
    "rtguid=",
    "vendid=",
    "devid=",
    "sysimgguid=",
    "4xQDR",
    "12xEDR",
    "4x???",
    "enhanced port 0",
    "base port 0",
    "w=",
    "s=",
    "e=",
    "S-0000000000000020",
    "H-0000000000000010",
    "width=",
    "speed=",
    "@",
    "=",
    "+",
    "ffffffffffffffff",
    "18446744073709551616",
    "65535",
    "lmc 200",
    "lid 65535",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    let fragment =
        proptest::collection::vec(proptest::sample::select(TOKENS), 0..8).prop_map(|t| t.concat());
    prop_oneof![
        any::<usize>().prop_map(Mutation::DeleteLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        (any::<usize>(), fragment).prop_map(|(a, s)| Mutation::ReplaceLine(a, s)),
        any::<usize>().prop_map(Mutation::DeleteChar),
        (any::<usize>(), interesting_char()).prop_map(|(a, c)| Mutation::InsertChar(a, c)),
        (any::<usize>(), interesting_char()).prop_map(|(a, c)| Mutation::ReplaceChar(a, c)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

/// Byte offset of the `i`-th character (modulo the count), or the end.
fn char_at(s: &str, i: usize) -> usize {
    let n = s.chars().count();
    if n == 0 {
        return 0;
    }
    s.char_indices().nth(i % n).map_or(s.len(), |(b, _)| b)
}

fn apply(text: &str, mutations: &[Mutation]) -> String {
    let mut text = text.to_owned();
    for m in mutations {
        let mut lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
        let n = lines.len();
        match m {
            Mutation::DeleteLine(i) => {
                lines.remove(i % n);
            }
            Mutation::DuplicateLine(i) => {
                let l = lines[i % n].clone();
                lines.insert(i % n, l);
            }
            Mutation::SwapLines(a, b) => lines.swap(a % n, b % n),
            Mutation::ReplaceLine(i, s) => lines[i % n] = s.clone(),
            Mutation::DeleteChar(i) => {
                let at = char_at(&text, *i);
                if at < text.len() {
                    text.remove(at);
                }
                continue;
            }
            Mutation::InsertChar(i, c) => {
                let at = char_at(&text, *i);
                text.insert(at, *c);
                continue;
            }
            Mutation::ReplaceChar(i, c) => {
                let at = char_at(&text, *i);
                if at < text.len() {
                    text.remove(at);
                }
                text.insert(at, *c);
                continue;
            }
            Mutation::Truncate(i) => {
                let at = char_at(&text, *i);
                text.truncate(at);
                continue;
            }
        }
        text = lines.join("\n");
    }
    text
}

#[test]
fn the_samples_are_valid() {
    for s in samples() {
        ibnetdiscover::parse(s, "s")
            .map(|_| ())
            .or_else(|_| ibsim::parse(s, "s").map(|_| ()))
            .unwrap();
        ibsim::parse(s, "s").unwrap();
    }
}

#[test]
fn messages_are_checked_properly() {
    assert!(names_file_and_line("a.net:12: bad", "a.net"));
    assert!(!names_file_and_line("a.net: bad", "a.net"));
    assert!(!names_file_and_line("a.net:0: bad", "a.net"));
    assert!(!names_file_and_line("b.net:1: bad", "a.net"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        check_both(&text)?;
    }

    #[test]
    fn token_soup_never_panics(tokens in proptest::collection::vec(proptest::sample::select(TOKENS), 0..80)) {
        check_both(&tokens.concat())?;
    }

    #[test]
    fn mutated_files_never_panic(
        which in 0..6usize,
        mutations in proptest::collection::vec(mutation(), 1..6),
    ) {
        let text = apply(&samples()[which % samples().len()], &mutations);
        check_both(&text)?;
    }
}
