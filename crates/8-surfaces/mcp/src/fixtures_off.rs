//! A build without the conformance suite's fixtures (the `conformance-fixtures` feature off,
//! as `cargo build` makes the shipped binary): nothing of them is in it. The same interface
//! as `fixtures`, with nothing behind it; `Shared::fixtures` is never true here.

use rmcp::model::*;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};

pub fn tools() -> Vec<Tool> {
    Vec::new()
}

pub fn is_tool(_name: &str) -> bool {
    false
}

pub fn task_support(_params: &CallToolRequestParams) -> Option<crate::tasks::Support> {
    None
}

pub async fn call_request(
    params: &CallToolRequestParams,
    _ctx: &RequestContext<RoleServer>,
    _hub: &super::hub::Hub,
    _task: Option<&rmcp::task_manager::TaskContext>,
) -> Result<CallToolResponse, McpError> {
    Err(McpError::invalid_params(
        format!("no fixture tool {:?} in this build", params.name),
        None,
    ))
}

pub fn resources() -> Vec<Resource> {
    Vec::new()
}

pub fn templates() -> Vec<ResourceTemplate> {
    Vec::new()
}

pub fn read(_uri: &str) -> Option<ReadResourceResult> {
    None
}

pub fn prompts() -> Vec<Prompt> {
    Vec::new()
}

pub fn get_prompt_request(
    _params: &GetPromptRequestParams,
) -> Option<Result<GetPromptResponse, McpError>> {
    None
}
