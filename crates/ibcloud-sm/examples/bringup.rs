//! One heavy sweep from the command line (for trying the SM under ibsim
//! without the Python layer):
//!
//! ```text
//! LD_PRELOAD=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so IBSIM_SOCKNAME=… \
//!   cargo run -p ibcloud-sm --example bringup -- minhop /dev/shm/dumps
//! ```

use ibcloud_sm::sm::{SmConfig, SubnetManager};
use ibcloud_sm::transport::UmadTransport;

fn main() {
    let mut args = std::env::args().skip(1);
    let engine = args.next().unwrap_or_else(|| "minhop".into());
    let dump = args.next().map(std::path::PathBuf::from);
    let config = SmConfig {
        engine,
        dump_dir: dump,
        ..SmConfig::default()
    };
    let run = || -> Result<String, ibcloud_sm::SmError> {
        let t = UmadTransport::open(None, 0)?;
        let mut sm = SubnetManager::new(t, config)?;
        let r = sm.heavy_sweep("bring-up")?;
        Ok(serde_json::to_string_pretty(&r).unwrap_or_default())
    };
    match run() {
        Ok(s) => println!("{s}"),
        Err(e) => {
            eprintln!("ibcloud-sm: error: {e}");
            std::process::exit(1);
        }
    }
}
