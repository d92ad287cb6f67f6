// Fuzzes the agent's option strings (NMPROF_OPTIONS, -agentpath:...=, attach
// requests) and checks what the CLI relies on: whatever parses formats back into a
// string that parses to the same options, and sizes round-trip through format_size.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "protocol/agent_options.h"
#include "protocol/attach_request.h"

namespace {

bool same_options(const nmprof::AgentOptions& a, const nmprof::AgentOptions& b) {
  return a.interval == b.interval && a.file == b.file && a.stack_depth == b.stack_depth && a.live == b.live &&
         a.max_tracked == b.max_tracked && a.output == b.output && a.reply == b.reply;
}

// A broken property is a finding: abort so that libFuzzer saves the input.
void require(bool property) {
  if (!property) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);

  nmprof::AgentOptions options;
  if (!nmprof::parse_agent_options(text, options)) {
    nmprof::AgentOptions again;
    require(!nmprof::parse_agent_options(nmprof::format_agent_options(options), again));
    require(same_options(options, again));
  }

  nmprof::AttachRequest request;
  if (!nmprof::parse_attach_request(text, request)) {
    nmprof::AttachRequest again;
    require(!nmprof::parse_attach_request(nmprof::format_attach_request(request), again));
    require(again.command == request.command && same_options(again.options, request.options));
  }

  if (std::optional<uint64_t> bytes = nmprof::parse_size(text)) {
    require(nmprof::parse_size(nmprof::format_size(*bytes)) == bytes);
  }

  nmprof::AttachReply reply = nmprof::parse_attach_reply(text);
  require(nmprof::parse_attach_reply(nmprof::format_attach_reply(reply)) == reply);
  nmprof::expand_path_template(text, 4123, "20260101-000000");
  return 0;
}
