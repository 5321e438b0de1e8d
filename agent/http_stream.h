#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/turn_interrupt.h"

namespace caretz {

struct HttpRequest {
    std::string url;
    std::vector<std::string> headers;  // "Name: value"
    std::string body;
};

// How a streamed POST ended.
struct HttpResult {
    long status = 0;           // the HTTP status; 0 when no answer came
    std::string retry_after;   // the Retry-After header, if any
    std::string error_body;    // the body of a non-2xx answer, bounded
    std::string failure;       // what went wrong in transport, in curl's words; empty if nothing
    bool stalled = false;      // nothing came for the stall timeout
    bool interrupted = false;  // the user pressed Ctrl-C
    bool stopped = false;      // the body consumer asked to stop
};

// POSTs `request` with libcurl (connect timeout 10 s) and hands the body of a 2xx answer to
// `on_body` as it arrives; `on_body` returns false to stop. Nothing arriving for
// `stall_timeout` ends the transfer, and so does Ctrl-C through `interrupt`.
HttpResult post_streaming(const HttpRequest& request,
                          const std::function<bool(std::string_view)>& on_body,
                          TurnInterrupt& interrupt, std::chrono::seconds stall_timeout);

// GETs `request.url` with libcurl, giving up after `timeout` in all. Only the status and, for a
// non-2xx answer, the bounded error body are kept. For a quick look at whether an API answers.
HttpResult get_status(const HttpRequest& request, std::chrono::milliseconds timeout);

}  // namespace caretz
