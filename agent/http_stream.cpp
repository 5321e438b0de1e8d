#include "agent/http_stream.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <strings.h>

#include <chrono>
#include <memory>
#include <mutex>

namespace caretz {

namespace {

constexpr long kConnectTimeoutSeconds = 10;
constexpr size_t kErrorBodyLimit = 64 * 1024;

// libcurl, opened the first time Caretz talks to a model. Linked, it and the 30 libraries it
// pulls in (TLS, Kerberos, LDAP, ...) would load with every start of the binary, including the
// one-shot `caretz exec` and the helpers Caretz starts inside each sandbox, which never use it.
struct Curl {
    decltype(&::curl_global_init) global_init;
    decltype(&::curl_easy_init) easy_init;
    decltype(&::curl_easy_cleanup) easy_cleanup;
    decltype(&::curl_easy_setopt) easy_setopt;
    decltype(&::curl_easy_getinfo) easy_getinfo;
    decltype(&::curl_easy_perform) easy_perform;
    decltype(&::curl_easy_strerror) easy_strerror;
    decltype(&::curl_multi_init) multi_init;
    decltype(&::curl_multi_cleanup) multi_cleanup;
    decltype(&::curl_multi_add_handle) multi_add_handle;
    decltype(&::curl_multi_remove_handle) multi_remove_handle;
    decltype(&::curl_multi_perform) multi_perform;
    decltype(&::curl_multi_poll) multi_poll;
    decltype(&::curl_multi_info_read) multi_info_read;
    decltype(&::curl_slist_append) slist_append;
    decltype(&::curl_slist_free_all) slist_free_all;
};

template <typename F>
bool find_symbol(void* library, const char* name, F& function) {
    function = reinterpret_cast<F>(::dlsym(library, name));
    return function != nullptr;
}

// The loaded library, or nullptr with `error` saying why (curl_global_init done once).
const Curl* load_curl(std::string& error) {
    static Curl curl;
    static std::string failure;
    static std::once_flag loaded;
    std::call_once(loaded, [] {
        void* library = ::dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
        if (!library) {
            failure = std::string("libcurl could not be loaded: ") + ::dlerror();
            return;
        }
        bool found = find_symbol(library, "curl_global_init", curl.global_init) &&
                     find_symbol(library, "curl_easy_init", curl.easy_init) &&
                     find_symbol(library, "curl_easy_cleanup", curl.easy_cleanup) &&
                     find_symbol(library, "curl_easy_setopt", curl.easy_setopt) &&
                     find_symbol(library, "curl_easy_getinfo", curl.easy_getinfo) &&
                     find_symbol(library, "curl_easy_perform", curl.easy_perform) &&
                     find_symbol(library, "curl_easy_strerror", curl.easy_strerror) &&
                     find_symbol(library, "curl_multi_init", curl.multi_init) &&
                     find_symbol(library, "curl_multi_cleanup", curl.multi_cleanup) &&
                     find_symbol(library, "curl_multi_add_handle", curl.multi_add_handle) &&
                     find_symbol(library, "curl_multi_remove_handle", curl.multi_remove_handle) &&
                     find_symbol(library, "curl_multi_perform", curl.multi_perform) &&
                     find_symbol(library, "curl_multi_poll", curl.multi_poll) &&
                     find_symbol(library, "curl_multi_info_read", curl.multi_info_read) &&
                     find_symbol(library, "curl_slist_append", curl.slist_append) &&
                     find_symbol(library, "curl_slist_free_all", curl.slist_free_all);
        if (!found) {
            failure = std::string("libcurl.so.4 lacks a function Caretz uses: ") + ::dlerror();
            return;
        }
        curl.global_init(CURL_GLOBAL_DEFAULT);
    });
    error = failure;
    return failure.empty() ? &curl : nullptr;
}

struct Transfer {
    const Curl* curl;
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
    t->curl->easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
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

using EasyHandle = std::unique_ptr<CURL, decltype(&::curl_easy_cleanup)>;
using MultiHandle = std::unique_ptr<CURLM, decltype(&::curl_multi_cleanup)>;
using HeaderList = std::unique_ptr<curl_slist, decltype(&::curl_slist_free_all)>;

// Drives the transfer until it ends, stalls or the user interrupts; returns curl's result.
// curl's own low-speed limit averages over seconds of history, so a stream that sent a little
// and then went silent would pass it; silence is measured here instead.
CURLcode run_transfer(CURLM* multi, Transfer& transfer, TurnInterrupt& interrupt,
                      std::chrono::seconds stall_timeout) {
    const Curl& curl = *transfer.curl;
    CURL* easy = transfer.easy;
    HttpResult& result = *transfer.result;
    transfer.last_bytes = std::chrono::steady_clock::now();
    curl.multi_add_handle(multi, easy);
    CURLcode code = CURLE_OK;
    int running = 1;
    while (running) {
        if (curl.multi_perform(multi, &running) != CURLM_OK) break;
        if (!running) break;
        int fd = interrupt.fd();
        curl_waitfd terminal{fd, CURL_WAIT_POLLIN, 0};
        curl.multi_poll(multi, fd >= 0 ? &terminal : nullptr, fd >= 0 ? 1 : 0, 1000, nullptr);
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
    while (CURLMsg* msg = curl.multi_info_read(multi, &queued))
        if (msg->msg == CURLMSG_DONE) code = msg->data.result;
    curl.multi_remove_handle(multi, easy);
    return code;
}

// The handle set up as both requests need it; `headers` and `error_text` must outlive it.
void prepare(const HttpRequest& request, curl_slist* headers, Transfer& transfer,
             char* error_text) {
    const Curl& curl = *transfer.curl;
    CURL* e = transfer.easy;
    curl.easy_setopt(e, CURLOPT_URL, request.url.c_str());
    curl.easy_setopt(e, CURLOPT_HTTPHEADER, headers);
    curl.easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl.easy_setopt(e, CURLOPT_CONNECTTIMEOUT, kConnectTimeoutSeconds);
    curl.easy_setopt(e, CURLOPT_ERRORBUFFER, error_text);
    curl.easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl.easy_setopt(e, CURLOPT_HEADERDATA, &transfer);
    curl.easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
    curl.easy_setopt(e, CURLOPT_WRITEDATA, &transfer);
}

HeaderList header_list(const Curl& curl, const HttpRequest& request) {
    HeaderList headers(nullptr, curl.slist_free_all);
    for (const auto& h : request.headers)
        headers.reset(curl.slist_append(headers.release(), h.c_str()));
    return headers;
}

}  // namespace

HttpResult post_streaming(const HttpRequest& request,
                          const std::function<bool(std::string_view)>& on_body,
                          TurnInterrupt& interrupt, std::chrono::seconds stall_timeout) {
    HttpResult result;
    const Curl* curl = load_curl(result.failure);
    if (!curl) return result;
    EasyHandle easy(curl->easy_init(), curl->easy_cleanup);
    MultiHandle multi(curl->multi_init(), curl->multi_cleanup);
    if (!easy || !multi) {
        result.failure = "libcurl could not start a transfer";
        return result;
    }
    HeaderList headers = header_list(*curl, request);
    Transfer transfer{curl, easy.get(), &result, &on_body, {}};
    char error_text[CURL_ERROR_SIZE] = {};
    CURL* e = easy.get();
    prepare(request, headers.get(), transfer, error_text);
    curl->easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    curl->easy_setopt(e, CURLOPT_POSTFIELDS, request.body.data());
    curl->easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);

    CURLcode code = run_transfer(multi.get(), transfer, interrupt, stall_timeout);
    curl->easy_getinfo(e, CURLINFO_RESPONSE_CODE, &result.status);
    if (result.interrupted || result.stalled || code == CURLE_OK) return result;
    if (result.stopped && code == CURLE_WRITE_ERROR) return result;
    result.failure = error_text[0] ? error_text : curl->easy_strerror(code);
    return result;
}

HttpResult get_status(const HttpRequest& request, std::chrono::milliseconds timeout) {
    HttpResult result;
    const Curl* curl = load_curl(result.failure);
    if (!curl) return result;
    EasyHandle easy(curl->easy_init(), curl->easy_cleanup);
    if (!easy) {
        result.failure = "libcurl could not start a transfer";
        return result;
    }
    HeaderList headers = header_list(*curl, request);
    const std::function<bool(std::string_view)> ignore_body = [](std::string_view) { return true; };
    Transfer transfer{curl, easy.get(), &result, &ignore_body, {}};
    char error_text[CURL_ERROR_SIZE] = {};
    CURL* e = easy.get();
    prepare(request, headers.get(), transfer, error_text);
    curl->easy_setopt(e, CURLOPT_HTTPGET, 1L);
    curl->easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
    CURLcode code = curl->easy_perform(e);
    curl->easy_getinfo(e, CURLINFO_RESPONSE_CODE, &result.status);
    if (code != CURLE_OK) result.failure = error_text[0] ? error_text : curl->easy_strerror(code);
    return result;
}

}  // namespace caretz
