//! Composition: pipelines as versioned tools (validated creation), and `execute_code` —
//! Python or JavaScript that calls stored tools through a `tools` object, with only the final
//! result returned.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The crates below, under the names the code map gives them.
use toolsmith_app as app;
use toolsmith_app::examples;
use toolsmith_error as error;
use toolsmith_index as index;
use toolsmith_manifest as manifest;
use toolsmith_platform as platform;
use toolsmith_runner as runner;
use toolsmith_toolbox as toolbox;

pub mod execute;
pub mod pipeline;
