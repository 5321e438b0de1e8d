#include "agent/http_stream.h"

#include <curl/curl.h>
#include <strings.h>

#include <chrono>
#include <memory>
#include <mutex>

namespace caretz {

namespace {

constexpr long kConnectTimeoutSeconds = 10;
constexpr size_t kErrorBodyLimit = 64 * 1024;

struct Transfer {
    CURL* easy;
    HttpResult* result;
    const std::function<bool(std::string_view)>* on_body;
    std::chrono::steady_clock::time_point last_bytes;  // when the server last sent anything
};

size_t on_header(char* data, size_t size, size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    t->last_bytes = std::chrono::steady_clock::now();
    std::string_view line(data, size * count);
    constexpr std::string_view kRetryAfter = "retry-after:";
    if (line.size() > kRetryAfter.size() &&
        ::strncasecmp(line.data(), kRetryAfter.data(), kRetryAfter.size()) == 0) {
        line.remove_prefix(kRetryAfter.size());
        while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
        t->result->retry_after = std::string(line);
    }
    return size * count;
}

size_t on_write(char* data, size_t size, size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    t->last_bytes = std::chrono::steady_clock::now();
    long status = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    std::string_view bytes(data, size * count);
    if (status >= 200 && status < 300) {
        if (!(*t->on_body)(bytes)) {
            t->result->stopped = true;
            return 0;
        }
    } else if (t->result->error_body.size() < kErrorBodyLimit) {
        t->result->error_body.append(
            bytes.substr(0, kErrorBodyLimit - t->result->error_body.size()));
    }
    return bytes.size();
}

using EasyHandle = std::unique_ptr<CURL, decltype(&curl_easy_cleanup)>;
using MultiHandle = std::unique_ptr<CURLM, decltype(&curl_multi_cleanup)>;
using HeaderList = std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)>;

// Drives the transfer until it ends, stalls or the user interrupts; returns curl's result.
// curl's own low-speed limit averages over seconds of history, so a stream that sent a little
// and then went silent would pass it; silence is measured here instead.
CURLcode run_transfer(CURLM* multi, Transfer& transfer, TurnInterrupt& interrupt,
                      std::chrono::seconds stall_timeout) {
    CURL* easy = transfer.easy;
    HttpResult& result = *transfer.result;
    transfer.last_bytes = std::chrono::steady_clock::now();
    curl_multi_add_handle(multi, easy);
    CURLcode code = CURLE_OK;
    int running = 1;
    while (running) {
        if (curl_multi_perform(multi, &running) != CURLM_OK) break;
        if (!running) break;
        int fd = interrupt.fd();
        curl_waitfd terminal{fd, CURL_WAIT_POLLIN, 0};
        curl_multi_poll(multi, fd >= 0 ? &terminal : nullptr, fd >= 0 ? 1 : 0, 1000, nullptr);
        if (fd >= 0 && (terminal.revents & CURL_WAIT_POLLIN) && interrupt.check()) {
            result.interrupted = true;
            break;
        }
        if (std::chrono::steady_clock::now() - transfer.last_bytes > stall_timeout) {
            result.stalled = true;
            break;
        }
    }
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &queued))
        if (msg->msg == CURLMSG_DONE) code = msg->data.result;
    curl_multi_remove_handle(multi, easy);
    return code;
}

// The handle set up as both requests need it; `headers` and `error_text` must outlive it.
void prepare(CURL* e, const HttpRequest& request, curl_slist* headers, Transfer& transfer,
             char* error_text) {
    curl_easy_setopt(e, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, kConnectTimeoutSeconds);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, error_text);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &transfer);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &transfer);
}

HeaderList header_list(const HttpRequest& request) {
    HeaderList headers(nullptr, curl_slist_free_all);
    for (const auto& h : request.headers)
        headers.reset(curl_slist_append(headers.release(), h.c_str()));
    return headers;
}

void init_curl_once() {
    static std::once_flag curl_ready;
    std::call_once(curl_ready, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

HttpResult post_streaming(const HttpRequest& request,
                          const std::function<bool(std::string_view)>& on_body,
                          TurnInterrupt& interrupt, std::chrono::seconds stall_timeout) {
    init_curl_once();
    HttpResult result;
    EasyHandle easy(curl_easy_init(), curl_easy_cleanup);
    MultiHandle multi(curl_multi_init(), curl_multi_cleanup);
    if (!easy || !multi) {
        result.failure = "libcurl could not start a transfer";
        return result;
    }
    HeaderList headers = header_list(request);
    Transfer transfer{easy.get(), &result, &on_body, {}};
    char error_text[CURL_ERROR_SIZE] = {};
    CURL* e = easy.get();
    prepare(e, request, headers.get(), transfer, error_text);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);

    CURLcode code = run_transfer(multi.get(), transfer, interrupt, stall_timeout);
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &result.status);
    if (result.interrupted || result.stalled || code == CURLE_OK) return result;
    if (result.stopped && code == CURLE_WRITE_ERROR) return result;
    result.failure = error_text[0] ? error_text : curl_easy_strerror(code);
    return result;
}

HttpResult get_status(const HttpRequest& request, std::chrono::milliseconds timeout) {
    init_curl_once();
    HttpResult result;
    EasyHandle easy(curl_easy_init(), curl_easy_cleanup);
    if (!easy) {
        result.failure = "libcurl could not start a transfer";
        return result;
    }
    HeaderList headers = header_list(request);
    const std::function<bool(std::string_view)> ignore_body = [](std::string_view) { return true; };
    Transfer transfer{easy.get(), &result, &ignore_body, {}};
    char error_text[CURL_ERROR_SIZE] = {};
    CURL* e = easy.get();
    prepare(e, request, headers.get(), transfer, error_text);
    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
    CURLcode code = curl_easy_perform(e);
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &result.status);
    if (code != CURLE_OK) result.failure = error_text[0] ? error_text : curl_easy_strerror(code);
    return result;
}

}  // namespace caretz
