//! Composition: pipelines as versioned tools (validated creation), and `execute_code` —
//! Python or JavaScript that calls stored tools through a `tools` object, with only the final
//! result returned.

pub mod execute;
pub mod pipeline;
