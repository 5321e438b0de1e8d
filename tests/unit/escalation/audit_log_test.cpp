#include "escalation/audit_log.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/unit/temp_dir.h"

using namespace caretz;
using nlohmann::json;

namespace {

// A line as AuditLog::append writes it.
json offer_line(const std::string& command) {
    return {{"time", "2026-12-01T10:00:00Z"},
            {"event", "offer"},
            {"session", "4f2a9c01"},
            {"source", "model"},
            {"command", command},
            {"cwd", "/home/ops/work"},
            {"refusals",
             json::array({{{"kind", "hidden"},
                           {"subject", "/home/ops/.ssh/id_ed25519"},
                           {"evidence", "cat: /home/ops/.ssh/id_ed25519: No such file"}},
                          {{"kind", "sudo"}, {"subject", "sudo"}, {"evidence", "sudo: ..."}}})},
            {"decision", "allow_once"}};
}

std::string command_field(const std::string& line) {
    auto at = line.find(" command=");
    return at == std::string::npos ? "" : line.substr(at + 9);
}

}  // namespace

TEST_CASE("audit syslog: an offer is one line of fields, decision first and command last") {
    CHECK(audit_syslog_line(offer_line("sudo systemctl restart nginx"), "ops") ==
          "event=offer decision=allow_once user=ops cwd=/home/ops/work "
          "refusals=\"hidden:/home/ops/.ssh/id_ed25519, sudo:sudo\" session=4f2a9c01 "
          "source=model command=\"sudo systemctl restart nginx\"");
}

TEST_CASE("audit syslog: reruns and network decisions keep their own fields") {
    json rerun = {{"time", "t"},     {"event", "rerun_finished"},
                  {"session", "s1"}, {"command", "make"},
                  {"cwd", "/w"},     {"rerun_exit", 2}};
    CHECK(audit_syslog_line(rerun, "ops") ==
          "event=rerun_finished user=ops cwd=/w rerun_exit=2 session=s1 command=make");
    json network = {{"time", "t"}, {"event", "network"}, {"session", "s1"},
                    {"port", 443}, {"host", "pypi.org"}, {"decision", "deny"}};
    CHECK(audit_syslog_line(network, "ops") ==
          "event=network decision=deny user=ops host=pypi.org port=443 session=s1");
}

TEST_CASE("audit syslog: a command cannot end the line or pose as another field") {
    struct Case {
        std::string command;
        std::string shown;
    };
    const Case cases[] = {
        {"ls\nevent=offer decision=deny", R"("ls\nevent=offer decision=deny")"},
        {"true\r\x1b[2Kdecision=deny", R"("true\r\e[2Kdecision=deny")"},
        {R"(echo " decision=allow_once)", R"("echo \" decision=allow_once")"},
        // A literal backslash-n stays apart from a newline.
        {R"(printf 'a\nb')", R"("printf 'a\\nb'")"},
        {"rm -rf /srv/\xe2\x80\xae"
         "gpj.txt",
         R"("rm -rf /srv/\u202egpj.txt")"},
        {std::string("cat \xff\x00x", 7), R"("cat \xff\x00x")"},
        {"", R"("")"},
    };
    for (const Case& c : cases) {
        CAPTURE(c.command);
        json line = offer_line(c.command);
        const std::string text = audit_syslog_line(line, "ops");
        CHECK(command_field(text) == c.shown);
        for (unsigned char byte : text) CHECK((byte >= 0x20 && byte != 0x7f));
    }
}

TEST_CASE("audit syslog: a cwd or host the sandbox chose is escaped like the command") {
    json network = {{"event", "network"},
                    {"session", "s1"},
                    {"host", "evil\n<34>caretz: event=offer"},
                    {"port", 80},
                    {"decision", "deny"}};
    CHECK(audit_syslog_line(network, "ops") ==
          R"(event=network decision=deny user=ops host="evil\n<34>caretz: event=offer" port=80 )"
          "session=s1");
}

TEST_CASE("audit log: with syslog on, the file is still the record and still required") {
    TempDir dir;
    AuditEntry entry{"s1", "user", "ls ~/.ssh", "/w", {}, Decision::allow_once, std::nullopt};

    AuditLog log((dir.path() / "state" / "audit.jsonl").string(), true);
    REQUIRE(log.append(entry));
    std::ifstream in(log.path());
    std::string first;
    REQUIRE(std::getline(in, first));
    CHECK(json::parse(first)["decision"] == "allow_once");

    // A regular file where the log's folder should be: unwritable even for root.
    std::ofstream(dir.path() / "not-a-folder") << "x";
    AuditLog blocked((dir.path() / "not-a-folder" / "audit.jsonl").string(), true);
    CHECK_FALSE(blocked.append(entry));
    CHECK_FALSE(blocked.append_rerun_exit(entry, 0));
    CHECK_FALSE(blocked.append_network("s1", "pypi.org", 443, "allow_once"));
}

TEST_CASE("audit log: a decision's line keeps what the sandboxed attempt changed") {
    TempDir dir;
    AuditLog log((dir.path() / "audit.jsonl").string(), false);
    ChangeList changed;
    changed.count = 7;
    for (const char* name : {"/w/a", "/w/b", "/w/c", "/w/d", "/w/e", "/w/f"})
        changed.kept.push_back({Change::Kind::created, name, "", false});
    changed.kept[1] = {Change::Kind::renamed, "/w/e.txt", "/w/d.txt", false};
    changed.incomplete = "3 folders have no watch";
    AuditEntry entry{"s1", "user", "./deploy.sh", "/w", {}, Decision::deny, changed};
    REQUIRE(log.append(entry));
    // Nothing recorded: no field.
    entry.changed.reset();
    REQUIRE(log.append(entry));
    // Nothing changed: the count alone.
    entry.changed = ChangeList{};
    REQUIRE(log.append(entry));

    std::ifstream in(log.path());
    std::string first, second, third;
    REQUIRE(std::getline(in, first));
    REQUIRE(std::getline(in, second));
    REQUIRE(std::getline(in, third));
    const json line = json::parse(first);
    CHECK(line["changed"] == 7);
    CHECK(line["changed_first"] == json::array({"created /w/a", "renamed /w/d.txt -> /w/e.txt",
                                                "created /w/c", "created /w/d", "created /w/e"}));
    CHECK(line["changed_incomplete"] == "3 folders have no watch");
    CHECK_FALSE(json::parse(second).contains("changed"));
    CHECK(json::parse(third)["changed"] == 0);
    CHECK_FALSE(json::parse(third).contains("changed_first"));
    CHECK_THAT(audit_syslog_line(line, "ops"),
               Catch::Contains("changed=7 changed_first=\"created /w/a, renamed /w/d.txt -> "
                               "/w/e.txt, created /w/c, created /w/d, created /w/e\" "
                               "changed_incomplete=\"3 folders have no watch\""));
}
