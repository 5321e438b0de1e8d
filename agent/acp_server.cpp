#include "agent/acp_server.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include "agent/acp_connection.h"
#include "agent/acp_jsonrpc.h"
#include "agent/acp_session.h"
#include "agent/transcript_replay.h"
#include "pty/fd_io.h"

namespace caretz {

namespace {

constexpr int kProtocolVersion = 1;

// A request whose params do not fit its method.
struct InvalidParams {
    std::string why;
};

const nlohmann::json& field(const nlohmann::json& params, const char* name) {
    static const nlohmann::json missing;
    return params.is_object() && params.contains(name) ? params[name] : missing;
}

std::string string_field(const nlohmann::json& params, const char* name) {
    const nlohmann::json& value = field(params, name);
    if (!value.is_string()) throw InvalidParams{std::string("\"") + name + "\" must be a string"};
    return value.get<std::string>();
}

// The prompt's content blocks as the text the model reads. A resource_link (a file the user
// mentioned) becomes a Markdown link, so the model can read it with a command; embedded text
// resources come along whole.
std::string prompt_text(const nlohmann::json& blocks) {
    if (!blocks.is_array()) throw InvalidParams{"\"prompt\" must be an array of content blocks"};
    std::string text;
    for (const auto& block : blocks) {
        const std::string type = block.is_object() ? block.value("type", "") : "";
        if (type == "text" && block.contains("text") && block["text"].is_string()) {
            text += block["text"].get<std::string>();
        } else if (type == "resource_link" && block.contains("uri") && block["uri"].is_string()) {
            text += "[" + block.value("name", block["uri"].get<std::string>()) + "](" +
                    block["uri"].get<std::string>() + ")";
        } else if (type == "resource" && block.contains("resource") &&
                   block["resource"].is_object() && block["resource"].contains("text")) {
            const nlohmann::json& r = block["resource"];
            text += "\n<resource uri=\"" + r.value("uri", "") + "\">\n" +
                    r["text"].get<std::string>() + "\n</resource>\n";
        } else {
            throw InvalidParams{
                "content blocks must be text, resource_link or a text resource; "
                "Caretz takes no " +
                (type.empty() ? std::string("untyped") : type) + " blocks"};
        }
    }
    return text;
}

class AcpServer {
public:
    AcpServer(const AcpConfig& config, int in_fd, int out_fd)
        : config_(config), in_fd_(in_fd), connection_(out_fd) {}

    int run() {
        std::string buffer;
        char chunk[65536];
        while (true) {
            ssize_t n = ::read(in_fd_, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            buffer.append(chunk, static_cast<size_t>(n));
            size_t start = 0;
            for (size_t end; (end = buffer.find('\n', start)) != std::string::npos; start = end + 1)
                handle_line(std::string_view(buffer).substr(start, end - start));
            buffer.erase(0, start);
        }
        if (!buffer.empty()) handle_line(buffer);
        shut_down();
        return 0;
    }

private:
    void handle_line(std::string_view line) {
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.find_first_not_of(" \t") == std::string_view::npos) return;
        JsonRpcParse parsed = parse_jsonrpc_line(line);
        if (!parsed.message) {
            if (!parsed.error_reply.is_null()) connection_.send(parsed.error_reply);
            return;
        }
        const JsonRpcMessage& m = *parsed.message;
        if (m.kind == JsonRpcMessage::Kind::response) {
            if (!connection_.deliver(m))
                std::fprintf(stderr, "caretz: an answer to no waiting request (id %s); ignored\n",
                             m.id.dump().c_str());
            return;
        }
        try {
            if (m.kind == JsonRpcMessage::Kind::notification) {
                notification(m);
            } else {
                request(m);
            }
        } catch (const InvalidParams& e) {
            invalid_params(m, e.why);
        } catch (const nlohmann::json::exception& e) {
            // A field of the wrong type deep inside the params.
            invalid_params(m, e.what());
        }
    }

    void invalid_params(const JsonRpcMessage& m, const std::string& why) {
        if (m.kind == JsonRpcMessage::Kind::request)
            connection_.send(jsonrpc_error(m.id, kInvalidParams, "Invalid params: " + why));
    }

    void notification(const JsonRpcMessage& m) {
        if (m.method == "session/cancel") {
            if (AcpSession* session = find_session(field(m.params, "sessionId"))) session->cancel();
            return;
        }
        std::fprintf(stderr, "caretz: ignored the notification %s\n", m.method.c_str());
    }

    void request(const JsonRpcMessage& m) {
        if (m.method == "initialize") {
            if (!field(m.params, "protocolVersion").is_number())
                throw InvalidParams{"\"protocolVersion\" must be a number"};
            connection_.send(jsonrpc_result(m.id, initialize_result()));
        } else if (m.method == "session/new") {
            new_session(m);
        } else if (m.method == "session/load") {
            load_session(m);
        } else if (m.method == "session/prompt") {
            prompt(m);
        } else {
            connection_.send(jsonrpc_error(m.id, kMethodNotFound, "Method not found: " + m.method));
        }
    }

    static nlohmann::json initialize_result() {
        return {{"protocolVersion", kProtocolVersion},
                {"agentCapabilities",
                 {{"loadSession", true},
                  {"promptCapabilities",
                   {{"image", false}, {"audio", false}, {"embeddedContext", true}}},
                  {"mcpCapabilities", {{"http", false}, {"sse", false}}}}},
                {"authMethods", nlohmann::json::array()}};
    }

    // The workspace a session/new or session/load names.
    static std::string workspace(const JsonRpcMessage& m) {
        const std::string cwd = string_field(m.params, "cwd");
        std::error_code error;
        if (!std::filesystem::path(cwd).is_absolute() || !std::filesystem::is_directory(cwd, error))
            throw InvalidParams{"\"cwd\" must be the absolute path of a folder"};
        // Caretz does not use MCP servers; the list is accepted and left aside.
        const nlohmann::json& servers = field(m.params, "mcpServers");
        if (!servers.is_null() && !servers.is_array())
            throw InvalidParams{"\"mcpServers\" must be an array"};
        return cwd;
    }

    void new_session(const JsonRpcMessage& m) {
        const std::string cwd = workspace(m);
        auto session = std::make_unique<AcpSession>(config_, connection_, config_.sandbox_for(cwd),
                                                    config_.new_pipeline_options());
        const std::string id = session->id();
        sessions_[id] = std::move(session);
        connection_.send(jsonrpc_result(m.id, {{"sessionId", id}}));
    }

    // session/load: the conversation of an earlier session (its transcript), in a new sandbox
    // session with no allowances, shown to the client before the answer.
    void load_session(const JsonRpcMessage& m) {
        const std::string id = string_field(m.params, "sessionId");
        const std::string cwd = workspace(m);
        // The id names a file: nothing in it may lead out of the sessions folder.
        if (id.empty() || id.find_first_not_of("0123456789abcdefghijklmnopqrstuvwxyz"
                                               "ABCDEFGHIJKLMNOPQRSTUVWXYZ-_") != std::string::npos)
            throw InvalidParams{"\"sessionId\" names no session Caretz kept"};
        if (sessions_.count(id)) {
            connection_.send(jsonrpc_error(m.id, kInvalidRequest,
                                           "the session " + id + " is open on this connection"));
            return;
        }
        const std::string path = config_.sessions_dir + "/" + id + ".jsonl";
        std::error_code error;
        if (!std::filesystem::is_regular_file(path, error))
            throw InvalidParams{"\"sessionId\" names no session Caretz kept: there is no " + path};
        try {
            std::optional<TranscriptLock> lock = TranscriptLock::take(path);
            if (!lock) {
                connection_.send(jsonrpc_error(
                    m.id, kInternalError,
                    "another Caretz is still writing the session " + id + "; end that one first"));
                return;
            }
            ReplayedConversation replayed = read_transcript(path);
            auto session = std::make_unique<AcpSession>(
                config_, connection_, config_.sandbox_for(cwd), config_.new_pipeline_options(),
                AcpSession::Loaded{id, path, std::move(*lock), std::move(replayed.conversation)});
            session->replay_to_client();
            sessions_[id] = std::move(session);
            connection_.send(jsonrpc_result(m.id, nlohmann::json::object()));
        } catch (const std::runtime_error& e) {  // TranscriptDamaged, an unreadable file
            connection_.send(jsonrpc_error(m.id, kInternalError, e.what()));
        }
    }

    void prompt(const JsonRpcMessage& m) {
        AcpSession* session = find_session(field(m.params, "sessionId"));
        if (!session) throw InvalidParams{"\"sessionId\" names no session of this connection"};
        std::string text = prompt_text(field(m.params, "prompt"));
        auto done = [this, id = m.id](const AcpSession::Result& result) {
            connection_.send(result.error.empty()
                                 ? jsonrpc_result(id, {{"stopReason", result.stop_reason}})
                                 : jsonrpc_error(id, kInternalError, result.error));
        };
        if (!session->start_turn(std::move(text), done))
            connection_.send(jsonrpc_error(m.id, kInvalidRequest,
                                           "a prompt is already running in this session"));
    }

    AcpSession* find_session(const nlohmann::json& id) {
        if (!id.is_string()) return nullptr;
        auto it = sessions_.find(id.get<std::string>());
        return it == sessions_.end() ? nullptr : it->second.get();
    }

    // The client is gone: running turns stop, nobody is left to answer requests, and each
    // session waits for its turn to end as it closes.
    void shut_down() {
        connection_.close();
        for (auto& [id, session] : sessions_) session->cancel();
        sessions_.clear();
    }

    const AcpConfig& config_;
    int in_fd_;
    AcpConnection connection_;
    std::map<std::string, std::unique_ptr<AcpSession>> sessions_;
};

}  // namespace

int run_acp_server(const AcpConfig& config, int in_fd, int out_fd) {
    return AcpServer(config, in_fd, out_fd).run();
}

int serve_acp_on_stdio(const AcpConfig& config) {
    auto [in, out] = take_standard_streams();
    if (in < 0) {
        std::perror("caretz acp: cannot set up stdin and stdout");
        return 1;
    }
    // A client that went away must not kill Caretz mid-write; the write fails instead.
    ::signal(SIGPIPE, SIG_IGN);
    return run_acp_server(config, in, out);
}

}  // namespace caretz
