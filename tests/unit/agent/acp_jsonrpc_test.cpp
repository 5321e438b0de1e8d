#include "agent/acp_jsonrpc.h"

#include <catch2/catch.hpp>

using namespace caretz;
using nlohmann::json;

namespace {

int error_code(const JsonRpcParse& p) {
    return p.error_reply["error"]["code"].get<int>();
}

}  // namespace

TEST_CASE("json-rpc: requests, notifications and responses are told apart", "[acp]") {
    auto request = parse_jsonrpc_line(
        R"({"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":"/w"}})");
    REQUIRE(request.message);
    CHECK(request.message->kind == JsonRpcMessage::Kind::request);
    CHECK(request.message->id == 7);
    CHECK(request.message->method == "session/new");
    CHECK(request.message->params["cwd"] == "/w");

    auto notification =
        parse_jsonrpc_line(R"({"jsonrpc":"2.0","method":"session/cancel","params":{}})");
    REQUIRE(notification.message);
    CHECK(notification.message->kind == JsonRpcMessage::Kind::notification);

    auto result = parse_jsonrpc_line(R"({"jsonrpc":"2.0","id":"a","result":{"x":1}})");
    REQUIRE(result.message);
    CHECK(result.message->kind == JsonRpcMessage::Kind::response);
    CHECK(result.message->result["x"] == 1);
    CHECK(result.message->error.is_null());

    auto error =
        parse_jsonrpc_line(R"({"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"no"}})");
    REQUIRE(error.message);
    CHECK(error.message->kind == JsonRpcMessage::Kind::response);
    CHECK(error.message->error["code"] == -32603);
}

TEST_CASE("json-rpc: broken lines get the error the spec names, with the id when known", "[acp]") {
    struct Case {
        const char* line;
        int code;
        json id;
    };
    const Case cases[] = {
        {"not json", kParseError, nullptr},
        {R"({"jsonrpc":"2.0","id":1,"method":"x")", kParseError, nullptr},  // cut short
        {"[]", kInvalidRequest, nullptr},                                   // batches
        {"42", kInvalidRequest, nullptr},
        {R"({"id":1,"method":"x"})", kInvalidRequest, 1},  // no "jsonrpc"
        {R"({"jsonrpc":"1.0","id":"q","method":"x"})", kInvalidRequest, "q"},
        {R"({"jsonrpc":"2.0","id":2,"method":5})", kInvalidRequest, 2},
        {R"({"jsonrpc":"2.0","id":{"a":1},"method":"x"})", kInvalidRequest, nullptr},
        {R"({"jsonrpc":"2.0","id":true,"method":"x"})", kInvalidRequest, nullptr},
        {R"({"jsonrpc":"2.0","id":3,"method":"x","params":"text"})", kInvalidRequest, 3},
        {R"({"jsonrpc":"2.0","id":4})", kInvalidRequest, 4},  // neither method nor result
        {R"({"jsonrpc":"2.0","id":5,"result":1,"error":{}})", kInvalidRequest, 5},
        {R"({"jsonrpc":"2.0","id":6,"error":"bad"})", kInvalidRequest, 6},
    };
    for (const auto& c : cases) {
        INFO(c.line);
        auto parsed = parse_jsonrpc_line(c.line);
        CHECK_FALSE(parsed.message);
        REQUIRE(parsed.error_reply.is_object());
        CHECK(error_code(parsed) == c.code);
        CHECK(parsed.error_reply["id"] == c.id);
        CHECK(parsed.error_reply["jsonrpc"] == "2.0");
    }
}

TEST_CASE("json-rpc: an error response without an id is dropped, not answered", "[acp]") {
    // Answering the peer's complaint about a line it could not read could go on forever.
    auto parsed = parse_jsonrpc_line(
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})");
    CHECK_FALSE(parsed.message);
    CHECK(parsed.error_reply.is_null());
}

TEST_CASE("json-rpc: messages go out as one compact line, invalid UTF-8 replaced", "[acp]") {
    std::string line = jsonrpc_line(
        jsonrpc_notification("session/update", {{"text", std::string("a\nb\xff", 4)}}));
    CHECK(line.back() == '\n');
    CHECK(line.find('\n') == line.size() - 1);
    CHECK(line.find("\xef\xbf\xbd") != std::string::npos);
    auto back = parse_jsonrpc_line(line.substr(0, line.size() - 1));
    REQUIRE(back.message);
    CHECK(back.message->params["text"] == "a\nb\xef\xbf\xbd");

    CHECK(jsonrpc_error(9, kMethodNotFound, "Method not found") ==
          json::parse(
              R"({"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"Method not found"}})"));
    CHECK(jsonrpc_result("x", {{"stopReason", "end_turn"}}) ==
          json::parse(R"({"jsonrpc":"2.0","id":"x","result":{"stopReason":"end_turn"}})"));
}
