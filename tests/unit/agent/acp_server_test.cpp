#include "agent/acp_server.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <thread>
#include <vector>

#include "agent/acp_approver.h"
#include "agent/acp_connection.h"
#include "escalation/offer.h"
#include "pty/fd_io.h"
#include "tests/unit/temp_dir.h"

using namespace caretz;
using nlohmann::json;

namespace {

// The server on two pipes, on a thread of its own, as a client sees it.
class ServerOnPipes {
public:
    explicit ServerOnPipes(const AcpConfig& config) {
        REQUIRE(::pipe2(to_server_, O_CLOEXEC) == 0);
        REQUIRE(::pipe2(from_server_, O_CLOEXEC) == 0);
        thread_ = std::thread([this, &config] {
            status_ = run_acp_server(config, to_server_[0], from_server_[1]);
            ::close(from_server_[1]);
        });
    }
    ~ServerOnPipes() {
        close_input();
        thread_.join();
        ::close(to_server_[0]);
        ::close(from_server_[0]);
    }

    void send(const std::string& line) { write_all(to_server_[1], line + "\n"); }
    void close_input() {
        if (to_server_[1] >= 0) ::close(std::exchange(to_server_[1], -1));
    }
    // The next line the server wrote; null when none comes within two seconds.
    json next() {
        while (true) {
            if (auto at = buffer_.find('\n'); at != std::string::npos) {
                std::string line = buffer_.substr(0, at);
                buffer_.erase(0, at + 1);
                return json::parse(line);
            }
            pollfd p{from_server_[0], POLLIN, 0};
            if (::poll(&p, 1, 2000) <= 0) return nullptr;
            char chunk[4096];
            ssize_t n = ::read(from_server_[0], chunk, sizeof chunk);
            if (n <= 0) return nullptr;
            buffer_.append(chunk, static_cast<size_t>(n));
        }
    }
    int join() {
        close_input();
        thread_.join();
        thread_ = std::thread([] {});
        return status_;
    }

private:
    int to_server_[2];
    int from_server_[2];
    std::thread thread_;
    std::string buffer_;
    int status_ = -1;
};

AcpConfig test_config() {
    AcpConfig config;
    config.sandbox_for = [](const std::string& cwd) {
        SandboxSpec spec;
        spec.cwd = cwd;
        spec.shell = "/bin/sh";
        return spec;
    };
    config.new_pipeline_options = [] {
        CommandPipeline::Options options;
        options.session_id = "s1";
        return options;
    };
    // A hosted API without a key: a prompt fails before anything is sent.
    config.model.base_url = "https://api.openai.com/v1";
    config.model.key_variables = "CARETZ_API_KEY";
    config.sessions_dir = "/nonexistent";
    return config;
}

int code_of(const json& reply) {
    return reply["error"]["code"].get<int>();
}

}  // namespace

TEST_CASE("acp server: wrong lines get JSON-RPC errors and the server keeps serving", "[acp]") {
    AcpConfig config = test_config();
    ServerOnPipes server(config);

    server.send("this is not json");
    CHECK(code_of(server.next()) == kParseError);
    server.send(R"({"jsonrpc":"2.0","id":1,"method":"session/set_mode","params":{}})");
    json reply = server.next();
    CHECK(code_of(reply) == kMethodNotFound);
    CHECK(reply["id"] == 1);
    server.send(R"({"jsonrpc":"2.0","id":2,"method":"initialize","params":{}})");
    CHECK(code_of(server.next()) == kInvalidParams);
    server.send(R"({"id":3,"method":"initialize"})");
    CHECK(code_of(server.next()) == kInvalidRequest);
    // An unknown notification and a stray response get no answer at all.
    server.send(R"({"jsonrpc":"2.0","method":"no/such/thing","params":{}})");
    server.send(R"({"jsonrpc":"2.0","id":99,"result":{}})");

    server.send(R"({"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":1}})");
    reply = server.next();
    CHECK(reply["id"] == 4);
    CHECK(reply["result"]["protocolVersion"] == 1);
    CHECK(reply["result"]["agentCapabilities"]["loadSession"] == true);
    CHECK(server.join() == 0);
}

TEST_CASE("acp server: sessions and prompts check their params", "[acp]") {
    AcpConfig config = test_config();
    ServerOnPipes server(config);

    server.send(
        R"({"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"relative","mcpServers":[]}})");
    CHECK(code_of(server.next()) == kInvalidParams);
    server.send(
        R"({"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":{}}})");
    CHECK(code_of(server.next()) == kInvalidParams);
    server.send(
        R"({"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/","mcpServers":[]}})");
    json reply = server.next();
    REQUIRE(reply["result"]["sessionId"] == "s1");

    server.send(
        R"({"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"other","prompt":[]}})");
    CHECK(code_of(server.next()) == kInvalidParams);
    server.send(
        R"({"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"image","data":"","mimeType":"image/png"}]}})");
    CHECK(code_of(server.next()) == kInvalidParams);
    server.send(
        R"({"jsonrpc":"2.0","id":6,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":7}]}})");
    CHECK(code_of(server.next()) == kInvalidParams);
    // A cancel with nothing running changes nothing.
    server.send(R"({"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}})");

    // A valid prompt runs on the session's thread; without a key the model cannot answer.
    server.send(
        R"({"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"},{"type":"resource_link","uri":"file:///a.txt","name":"a.txt"}]}})");
    reply = server.next();
    CHECK(reply["id"] == 7);
    CHECK(code_of(reply) == kInternalError);
    CHECK(reply["error"]["message"].get<std::string>().find("CARETZ_API_KEY") != std::string::npos);
    CHECK(server.join() == 0);
}

TEST_CASE("acp server: session/load shows the earlier conversation, then answers", "[acp]") {
    TempDir dir;
    AcpConfig config = test_config();
    config.sessions_dir = dir.path().string();
    const std::string cwd = dir.path().string();
    auto load = [&](int id, const std::string& session) {
        return json{
            {"jsonrpc", "2.0"},
            {"id", id},
            {"method", "session/load"},
            {"params", {{"sessionId", session}, {"cwd", cwd}, {"mcpServers", json::array()}}}}
            .dump();
    };
    const std::string header =
        R"({"type":"session","session_id":"old1","model":"m","cwd":")" + cwd + R"(","time":"t"})";
    std::ofstream(dir.path() / "old1.jsonl")
        << header << "\n"
        << R"({"type":"user","agent":"main","text":"the host is db7"})"
        << "\n"
        << R"({"type":"assistant","agent":"main","text":"Looking.","tool_calls":[{"id":"c","name":"shell","arguments":"{\"command\":\"ls\"}"}]})"
        << "\n"
        << R"({"type":"tool_result","agent":"main","tool_call_id":"c","tool":"shell","result":"exit status: 0"})"
        << "\n"
        << R"({"type":"assistant","agent":"main","text":"Done.","tool_calls":[{"id":"c","name":"shell","arguments":"{\"command\":\"sleep 9\"}"}]})"
        << "\n";
    std::ofstream(dir.path() / "bad1.jsonl") << header << "\n{oops\n";
    ServerOnPipes server(config);

    server.send(load(1, "old1"));
    std::vector<json> updates;
    json reply;
    while ((reply = server.next()).contains("method")) {
        CHECK(reply["method"] == "session/update");
        CHECK(reply["params"]["sessionId"] == "old1");
        updates.push_back(reply["params"]["update"]);
    }
    CHECK(reply["id"] == 1);
    CHECK(reply["result"] == json::object());
    REQUIRE(updates.size() == 7);
    CHECK(updates[0]["sessionUpdate"] == "user_message_chunk");
    CHECK(updates[0]["content"]["text"] == "the host is db7");
    CHECK(updates[1]["sessionUpdate"] == "agent_message_chunk");
    CHECK(updates[2]["sessionUpdate"] == "tool_call");
    CHECK(updates[2]["title"] == "ls");
    CHECK(updates[2]["kind"] == "execute");
    CHECK(updates[3]["sessionUpdate"] == "tool_call_update");
    CHECK(updates[3]["toolCallId"] == updates[2]["toolCallId"]);
    CHECK(updates[3]["status"] == "completed");
    CHECK(updates[4]["content"]["text"] == "Done.");
    // The model reused its call id; the client gets one of its own for each call.
    CHECK(updates[5]["toolCallId"] != updates[2]["toolCallId"]);
    // The call the earlier session ended during is closed as interrupted.
    CHECK(updates[6]["toolCallId"] == updates[5]["toolCallId"]);
    CHECK(updates[6]["content"].dump().find("the Caretz session ended") != std::string::npos);

    server.send(load(2, "old1"));
    reply = server.next();
    CHECK(code_of(reply) == kInvalidRequest);
    server.send(load(3, "bad1"));
    reply = server.next();
    CHECK(code_of(reply) == kInternalError);
    CHECK(reply["error"]["message"].get<std::string>().find("bad1.jsonl is damaged at line 2") !=
          std::string::npos);
    server.send(load(4, "../old1"));
    CHECK(code_of(server.next()) == kInvalidParams);
    server.send(load(5, "none"));
    CHECK(code_of(server.next()) == kInvalidParams);
    CHECK(server.join() == 0);
    // The loaded conversation goes on in its own transcript, marked as resumed.
    std::ifstream transcript(dir.path() / "old1.jsonl");
    std::string all((std::istreambuf_iterator<char>(transcript)), std::istreambuf_iterator<char>());
    CHECK(all.find(R"("type":"resumed")") != std::string::npos);
}

TEST_CASE("acp connection: a request ends with its answer, a timeout, a withdrawal or the end",
          "[acp]") {
    int out[2];
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    AcpConnection connection(out[1]);
    using Kind = AcpConnection::Answer::Kind;

    std::thread answerer([&] {
        // Reads the request the connection wrote and answers it, as the reading thread would.
        char buf[4096];
        ssize_t n = ::read(out[0], buf, sizeof buf);
        REQUIRE(n > 0);
        json request = json::parse(std::string(buf, static_cast<size_t>(n)));
        CHECK(request["method"] == "session/request_permission");
        JsonRpcMessage response;
        response.kind = JsonRpcMessage::Kind::response;
        response.id = request["id"];
        response.result = {{"outcome", {{"outcome", "cancelled"}}}};
        CHECK(connection.deliver(response));
        CHECK_FALSE(connection.deliver(response));  // answered already
    });
    auto answer =
        connection.request("session/request_permission", json::object(), std::nullopt, {});
    answerer.join();
    CHECK(answer.kind == Kind::result);
    CHECK(answer.result["outcome"]["outcome"] == "cancelled");

    auto start = std::chrono::steady_clock::now();
    answer = connection.request("x", json::object(), start + std::chrono::milliseconds(100), {});
    CHECK(answer.kind == Kind::timeout);
    CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(100));

    std::atomic<bool> withdrawn{false};
    std::thread canceller([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        withdrawn = true;
        connection.wake();
    });
    answer =
        connection.request("x", json::object(), std::nullopt, [&] { return withdrawn.load(); });
    canceller.join();
    CHECK(answer.kind == Kind::withdrawn);

    connection.close();
    CHECK(connection.request("x", json::object(), std::nullopt, {}).kind == Kind::closed);
    ::close(out[0]);
    ::close(out[1]);
}

namespace {

// A turn as the approver sees it, set by the test.
struct FakeTurn : AcpTurn {
    std::string current_tool_call() const override { return "call-7"; }
    bool cancelled() const override { return false; }
    int stop_fd() const override { return -1; }
};

// Answers the next request written to `fd` with `result` (a JSON text), as the client would;
// returns the request.
json answer_next_request(int fd, AcpConnection& connection, const std::string& result) {
    std::string line;
    char c;
    while (::read(fd, &c, 1) == 1 && c != '\n') line += c;
    json request = json::parse(line);
    JsonRpcMessage response;
    response.kind = JsonRpcMessage::Kind::response;
    response.id = request["id"];
    response.result = json::parse(result);
    connection.deliver(response);
    return request;
}

}  // namespace

TEST_CASE("acp approver: the offer is a permission request with three options", "[acp]") {
    int out[2];
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    AcpConnection connection(out[1]);
    FakeTurn turn;
    AcpApprover approver(connection, "s1", std::nullopt, turn);
    SandboxOffOffer offer{"touch /etc/x\x1b[2J",
                          "/w",
                          {Refusal{RefusalKind::write, "/etc/x", "touch: Read-only file system"}},
                          std::nullopt,
                          "/w"};

    struct Case {
        const char* answer;
        Decision decision;
    };
    const Case cases[] = {
        {R"({"outcome":{"outcome":"selected","optionId":"allow_once"}})", Decision::allow_once},
        {R"({"outcome":{"outcome":"selected","optionId":"allow_session"}})",
         Decision::allow_session},
        {R"({"outcome":{"outcome":"selected","optionId":"deny"}})", Decision::deny},
        {R"({"outcome":{"outcome":"cancelled"}})", Decision::deny},
        // Answers of another shape are no.
        {R"({"outcome":{"outcome":"selected","optionId":"something"}})", Decision::deny},
        {R"({"outcome":{"outcome":"selected","optionId":7}})", Decision::deny},
        {R"({"outcome":"selected"})", Decision::deny},
        {"null", Decision::deny},
    };
    for (const auto& c : cases) {
        INFO(c.answer);
        json request;
        std::thread client([&] { request = answer_next_request(out[0], connection, c.answer); });
        CHECK(approver.ask_sandbox_off(offer) == c.decision);
        client.join();
        CHECK(request["method"] == "session/request_permission");
        const json& params = request["params"];
        CHECK(params["sessionId"] == "s1");
        CHECK(params["toolCall"]["toolCallId"] == "call-7");
        CHECK(params["toolCall"]["kind"] == "execute");
        CHECK(params["toolCall"]["title"] == "touch /etc/x\\e[2J");  // shown escaped
        const std::string text = params["toolCall"]["content"][0]["content"]["text"];
        CHECK(text.find(kOfferHeading) == 0);
        CHECK(text.find("write: /etc/x") != std::string::npos);
        CHECK(text.find("already ran") != std::string::npos);
        std::vector<std::string> kinds;
        for (const auto& o : params["options"]) kinds.push_back(o["kind"]);
        CHECK(kinds == std::vector<std::string>{"allow_once", "allow_always", "reject_once"});
    }
    ::close(out[0]);
    ::close(out[1]);
}

TEST_CASE("acp approver: an unanswered request times out as the permission timeout says", "[acp]") {
    int out[2];
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    AcpConnection connection(out[1]);
    FakeTurn turn;
    AcpApprover approver(connection, "s1", std::chrono::seconds(1), turn);
    auto start = std::chrono::steady_clock::now();
    CHECK(approver.ask_network({"example.com", 443}) == Decision::timeout);
    CHECK(std::chrono::steady_clock::now() - start >= std::chrono::seconds(1));
    ::close(out[0]);
    ::close(out[1]);
}
