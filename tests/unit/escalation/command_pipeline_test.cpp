#include "escalation/command_pipeline.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "escalation/offer.h"
#include "tests/unit/escalation/fake_host.h"
#include "tests/unit/temp_dir.h"

using namespace caretz;
using caretz::testing::FakeHost;
using caretz::testing::test_policy;
using nlohmann::json;

namespace {

// What the fakes were asked to do, in order, so a test can say what happened before what.
using Journal = std::vector<std::string>;

constexpr const char* kWorkspace = "/home/cztest/work";
constexpr const char* kSubfolder = "/home/cztest/work/sub";
constexpr const char* kSshKey = "/home/cztest/.ssh/id_ed25519";

// Refused: the key is hidden from the sandbox, yet the fake host has it.
constexpr const char* kReadKey = "cat /home/cztest/.ssh/id_ed25519";
constexpr const char* kReadKeyOutput =
    "cat: /home/cztest/.ssh/id_ed25519: No such file or directory\r\n";
// Refused too, so "another text asks again" has something to ask about.
constexpr const char* kTouchEtc = "touch /etc/caretz-test";
constexpr const char* kTouchEtcOutput =
    "touch: cannot touch '/etc/caretz-test': Read-only file system\r\n";
// Never refused.
constexpr const char* kList = "ls";
constexpr const char* kListOutput = "notes.txt\r\n";

// Every audit line written so far; none when the log does not exist.
std::vector<json> audit_lines(const std::string& path) {
    std::vector<json> lines;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
    return lines;
}

// A sandbox that plays back one scripted run per command text and streams its output through
// CommandIo::on_output in two pieces, as a real one delivers whatever the PTY has read.
class FakeSandbox : public Sandbox {
public:
    struct Script {
        std::string output;
        int exit_code = 0;
        std::string cwd = kWorkspace;  // where the command ends, as a `cd` in it would leave it
        std::optional<std::vector<ProgramRun>> program_runs = std::vector<ProgramRun>{};
    };

    explicit FakeSandbox(Journal& journal) : journal_(journal) {}

    std::map<std::string, Script> scripts;

    SandboxResult run(const std::string& command, const CommandIo& io) override {
        journal_.push_back("sandbox: " + command);
        const Script& script = scripts.at(command);
        const size_t half = script.output.size() / 2;
        io.on_output(std::string_view(script.output).substr(0, half));
        io.on_output(std::string_view(script.output).substr(half));
        cwd_ = script.cwd;
        return SandboxResult{script.exit_code, script.cwd, false, script.program_runs};
    }
    std::string cwd() const override { return cwd_; }

    // What each command "changed", as the watch would say; with `journal_changes`, when the
    // record begins and ends goes into the journal.
    std::optional<ChangeList> changes = ChangeList{};
    bool journal_changes = false;
    void begin_changes() override {
        if (journal_changes) journal_.push_back("changes: begin");
    }
    std::optional<ChangeList> end_changes() override {
        if (journal_changes) journal_.push_back("changes: end");
        return changes;
    }

private:
    Journal& journal_;
    std::string cwd_ = kWorkspace;
};

// The user, answering from a script, and the host rerun behind them (Approver::rerun is the
// front end's way to run a command outside). The rerun notes what the audit log held when it
// started, because that line must be on disk before anything runs outside.
class FakeApprover : public Approver {
public:
    FakeApprover(Journal& journal, const std::string& audit_path)
        : journal_(journal), audit_path_(audit_path) {}

    Decision answer = Decision::deny;
    std::vector<SandboxOffOffer> offers;
    std::vector<RerunCommand> reruns;
    std::vector<std::vector<json>> audit_at_rerun;
    std::string rerun_output = "ssh-ed25519 AAAA key\r\n";
    int rerun_exit = 0;

    Decision ask_sandbox_off(const SandboxOffOffer& offer) override {
        journal_.push_back("ask: " + offer.command);
        offers.push_back(offer);
        return answer;
    }
    // The fake sandbox has no proxy, so this is never asked; if it were, the journal says so.
    Decision ask_network(const NetworkRequest& request) override {
        journal_.push_back("ask network: " + request.host);
        return Decision::deny;
    }
    int rerun(const RerunCommand& command,
              const std::function<void(std::string_view)>& on_output) override {
        journal_.push_back("rerun: " + command.command);
        reruns.push_back(command);
        audit_at_rerun.push_back(audit_lines(audit_path_));
        on_output(rerun_output);
        return rerun_exit;
    }

private:
    Journal& journal_;
    const std::string& audit_path_;  // the session's, which a test may move before it starts
};

// One Caretz session: a pipeline over the fakes, with --ask-sandbox-off and someone to ask
// unless a test changes that before its first command.
struct Session {
    TempDir state;
    Journal journal;
    FakeSandbox sandbox{journal};
    FakeHost host;
    SandboxSpec spec;
    CommandPipeline::Options options;
    FakeApprover approver{journal, options.audit_path};
    Approver* asked = &approver;
    SessionAllowances allowances;
    std::string screen;  // what reached the user's terminal
    std::unique_ptr<CommandPipeline> pipeline;

    Session() {
        host.paths = {kSshKey};
        host.writable = {"/etc"};  // as root may: a refused touch there is worth a rerun outside
        spec.policy = test_policy();
        spec.env = {{"HOME", "/home/cztest"}, {"PATH", "/usr/bin:/bin"}};
        spec.shell = "/bin/bash";
        spec.cwd = kWorkspace;
        options.ask_sandbox_off = true;
        options.session_id = "session-1";
        options.shell = "/bin/bash";
        options.audit_path = (state.path() / "caretz" / "audit.jsonl").string();
        sandbox.scripts = {{kReadKey, {kReadKeyOutput, 1, kSubfolder}},
                           {kTouchEtc, {kTouchEtcOutput, 1}},
                           {kList, {kListOutput, 0}}};
    }

    CommandOutcome run(const std::string& command, CommandSource source = CommandSource::model,
                       bool plan_mode = false) {
        if (!pipeline)
            pipeline =
                std::make_unique<CommandPipeline>(sandbox, host, spec, options, allowances, asked);
        CommandIo io;
        io.on_output = [this](std::string_view bytes) { screen += bytes; };
        return pipeline->run(CommandRequest{command, source, plan_mode}, io);
    }

    std::vector<json> audit() const { return audit_lines(options.audit_path); }
};

// What the model would get from the sandboxed attempt alone.
void check_sandboxed_result(const CommandOutcome& outcome) {
    CHECK(outcome.exit_code == 1);
    CHECK(outcome.output == "cat: /home/cztest/.ssh/id_ed25519: No such file or directory\n");
    CHECK(outcome.cwd == kSubfolder);
    CHECK_FALSE(outcome.ran_on_host);
    REQUIRE(outcome.refusals.size() == 1);
    CHECK(outcome.refusals[0].kind == RefusalKind::hidden);
    CHECK(outcome.refusals[0].subject == kSshKey);
}

}  // namespace

TEST_CASE("pipeline: a command nothing refused gives the sandbox's result and no audit line",
          "[command_pipeline]") {
    Session session;
    const CommandOutcome outcome = session.run(kList);
    CHECK(outcome.exit_code == 0);
    CHECK(outcome.output == "notes.txt\n");
    CHECK(outcome.cwd == kWorkspace);
    CHECK(outcome.refusals.empty());
    CHECK_FALSE(outcome.decision);
    CHECK_FALSE(outcome.ran_on_host);
    CHECK(session.screen == kListOutput);
    CHECK(session.journal == Journal{"sandbox: ls"});
    CHECK_FALSE(std::filesystem::exists(session.options.audit_path));
}

TEST_CASE("pipeline: an ENOENT for a path the host lacks too is the command's own failure",
          "[command_pipeline]") {
    // The refusal rests on the injected host alone: without the key there, nobody is asked.
    Session session;
    session.host.paths.clear();
    const CommandOutcome outcome = session.run(kReadKey);
    CHECK(outcome.exit_code == 1);
    CHECK(outcome.refusals.empty());
    CHECK_FALSE(outcome.decision);
    CHECK(session.journal == Journal{std::string("sandbox: ") + kReadKey});
    CHECK(session.audit().empty());
}

TEST_CASE("pipeline: who may be asked about a refusal", "[command_pipeline]") {
    struct Case {
        const char* name;
        bool ask_sandbox_off;
        bool someone_to_ask;
        CommandSource source;
        bool plan_mode;
        bool asked;
        std::optional<Decision> recorded;  // the decision in the outcome and the audit log
    };
    // The approver answers Deny, so an offer shows as a recorded deny.
    const Case cases[] = {
        {"the model's command", true, true, CommandSource::model, false, true, Decision::deny},
        {"the user's ! command", true, true, CommandSource::user, false, true, Decision::deny},
        {"without --ask-sandbox-off", false, true, CommandSource::model, false, false,
         std::nullopt},
        {"no terminal to ask on", true, false, CommandSource::model, false, false,
         Decision::nobody_to_ask},
        {"plan mode", true, true, CommandSource::model, true, false, Decision::nobody_to_ask},
        {"a subagent", true, true, CommandSource::subagent, false, false, Decision::nobody_to_ask},
        {"a background command", true, true, CommandSource::background, false, false,
         Decision::nobody_to_ask},
    };
    for (const Case& c : cases) {
        SECTION(c.name) {
            Session session;
            session.options.ask_sandbox_off = c.ask_sandbox_off;
            if (!c.someone_to_ask) session.asked = nullptr;
            const CommandOutcome outcome = session.run(kReadKey, c.source, c.plan_mode);

            // Whoever was or was not asked, a refusal that is not approved changes nothing.
            check_sandboxed_result(outcome);
            CHECK(outcome.decision == c.recorded);
            CHECK(session.approver.reruns.empty());
            CHECK(session.approver.offers.size() == (c.asked ? 1u : 0u));

            const std::vector<json> audit = session.audit();
            REQUIRE(audit.size() == (c.recorded ? 1u : 0u));
            if (c.recorded) {
                CHECK(audit[0]["event"] == "offer");
                CHECK(audit[0]["decision"] == std::string(to_string(*c.recorded)));
            }

            // A standing rule answers an offer in advance, so where none is made it changes
            // nothing either.
            if (!c.asked) {
                Session ruled;
                ruled.options.always_allow = {kReadKey};
                ruled.options.ask_sandbox_off = c.ask_sandbox_off;
                if (!c.someone_to_ask) ruled.asked = nullptr;
                const CommandOutcome ruled_outcome = ruled.run(kReadKey, c.source, c.plan_mode);
                check_sandboxed_result(ruled_outcome);
                CHECK(ruled_outcome.decision == c.recorded);
                CHECK(ruled.approver.reruns.empty());
            }
        }
    }
}

TEST_CASE("pipeline: the audit line names the source, the command, the cwd and the refusals",
          "[command_pipeline]") {
    Session session;
    session.run(kReadKey, CommandSource::user);
    const std::vector<json> audit = session.audit();
    REQUIRE(audit.size() == 1);
    CHECK(audit[0]["session"] == "session-1");
    CHECK(audit[0]["source"] == "user");
    CHECK(audit[0]["command"] == kReadKey);
    CHECK(audit[0]["cwd"] == kSubfolder);
    REQUIRE(audit[0]["refusals"].size() == 1);
    CHECK(audit[0]["refusals"][0]["kind"] == "hidden");
    CHECK(audit[0]["refusals"][0]["subject"] == kSshKey);
}

TEST_CASE("pipeline: the offer shows what the sandboxed attempt was refused, and where",
          "[command_pipeline]") {
    Session session;
    const CommandOutcome outcome = session.run(kReadKey);
    REQUIRE(session.approver.offers.size() == 1);
    const SandboxOffOffer& offer = session.approver.offers[0];
    CHECK(offer.command == kReadKey);
    CHECK(offer.cwd == kSubfolder);
    CHECK(offer.refusals == outcome.refusals);
    // The offer comes after the sandboxed attempt streamed to the screen.
    CHECK(session.screen == kReadKeyOutput);
}

TEST_CASE("pipeline: a script's sudo reaches the offer and the audit line by its command lines",
          "[command_pipeline]") {
    Session session;
    const std::string refusal =
        "sudo: The \"no new privileges\" flag is set, which prevents sudo from running as "
        "root.\r\n";
    session.sandbox.scripts["./deploy.sh"] = {
        refusal + refusal + "deploy finished\r\n", 0, kWorkspace,
        std::vector<ProgramRun>{
            {"sudo", kWorkspace, {"sudo", "-n", "systemctl", "restart", "nginx"}},
            {"sudo", kSubfolder, {"sudo", "-n", "true"}}}};
    session.run("./deploy.sh", CommandSource::user);
    REQUIRE(session.approver.offers.size() == 1);
    const std::string details = offer_details(session.approver.offers[0]);
    CHECK_THAT(details, Catch::Contains("  sudo: sudo -n systemctl restart nginx\n"
                                        "      (run by the command in /home/cztest/work)\n"));
    CHECK_THAT(details, Catch::Contains("  sudo: sudo -n true\n"
                                        "      (run by the command in /home/cztest/work/sub)\n"));
    const std::vector<json> audit = session.audit();
    REQUIRE(audit.size() == 1);
    REQUIRE(audit[0]["refusals"].size() == 2);
    CHECK(audit[0]["refusals"][1]["subject"] == "sudo -n true");
    CHECK(audit[0]["refusals"][1]["origin"] == "run by the command in /home/cztest/work/sub");
}

TEST_CASE("pipeline: printing sudo's refusal line without running sudo asks nothing",
          "[command_pipeline]") {
    Session session;
    session.sandbox.scripts["cat notes.txt"] = {
        "sudo: The \"no new privileges\" flag is set, which prevents sudo from running as "
        "root.\r\n",
        0};
    CHECK(session.run("cat notes.txt", CommandSource::user).refusals.empty());
    CHECK(session.approver.offers.empty());
}

TEST_CASE("pipeline: Deny and a timeout leave the sandboxed result unchanged",
          "[command_pipeline]") {
    const Decision answer = GENERATE(Decision::deny, Decision::timeout);
    CAPTURE(std::string(to_string(answer)));
    Session session;
    session.approver.answer = answer;
    const CommandOutcome outcome = session.run(kReadKey);

    check_sandboxed_result(outcome);
    CHECK(outcome.decision == answer);
    CHECK(session.journal ==
          Journal{std::string("sandbox: ") + kReadKey, std::string("ask: ") + kReadKey});
    CHECK_FALSE(session.allowances.covers(kReadKey));
    const std::vector<json> audit = session.audit();
    REQUIRE(audit.size() == 1);
    CHECK(audit[0]["decision"] == std::string(to_string(answer)));
}

TEST_CASE("pipeline: Allow once reruns on the host after the audit line is on disk",
          "[command_pipeline]") {
    Session session;
    session.approver.answer = Decision::allow_once;
    session.approver.rerun_exit = 3;
    const CommandOutcome outcome = session.run(kReadKey);

    CHECK(session.journal == Journal{std::string("sandbox: ") + kReadKey,
                                     std::string("ask: ") + kReadKey,
                                     std::string("rerun: ") + kReadKey});
    // What the model gets is the rerun's alone, marked as run outside (the note itself is
    // written from ran_on_host; see tool_result_test).
    CHECK(outcome.ran_on_host);
    CHECK(outcome.decision == Decision::allow_once);
    CHECK(outcome.exit_code == 3);
    CHECK(outcome.output == "ssh-ed25519 AAAA key\n");
    CHECK(outcome.cwd == kSubfolder);
    CHECK(outcome.refusals.size() == 1);

    // The user's shell, in the cwd the sandboxed attempt ended in, with the sandbox's env.
    REQUIRE(session.approver.reruns.size() == 1);
    const RerunCommand& rerun = session.approver.reruns[0];
    CHECK(rerun.shell == "/bin/bash");
    CHECK(rerun.command == kReadKey);
    CHECK(rerun.cwd == kSubfolder);
    CHECK(rerun.env == session.spec.env);

    // Flushed before the rerun started: the offer line and nothing after it.
    REQUIRE(session.approver.audit_at_rerun.size() == 1);
    const std::vector<json>& before = session.approver.audit_at_rerun[0];
    REQUIRE(before.size() == 1);
    CHECK(before[0]["event"] == "offer");
    CHECK(before[0]["decision"] == "allow_once");
    const std::vector<json> after = session.audit();
    REQUIRE(after.size() == 2);
    CHECK(after[1]["event"] == "rerun_finished");
    CHECK(after[1]["rerun_exit"] == 3);

    // Once is once: the same text goes through the sandbox and the offer again.
    CHECK_FALSE(session.allowances.covers(kReadKey));
    session.approver.answer = Decision::deny;
    CHECK_FALSE(session.run(kReadKey).ran_on_host);
    CHECK(session.approver.offers.size() == 2);
}

TEST_CASE("pipeline: a write the host would refuse too asks nothing", "[command_pipeline]") {
    Session session;
    session.host.writable.clear();
    const CommandOutcome outcome = session.run(kTouchEtc);
    CHECK(session.journal == Journal{std::string("sandbox: ") + kTouchEtc});
    CHECK(outcome.refusals.empty());
    CHECK_FALSE(outcome.decision.has_value());
    CHECK(session.approver.offers.empty());
}

TEST_CASE("pipeline: Allow for session runs the identical text outside without asking",
          "[command_pipeline]") {
    Session session;
    session.approver.answer = Decision::allow_session;
    const CommandOutcome first = session.run(kReadKey);
    CHECK(first.ran_on_host);
    CHECK(first.decision == Decision::allow_session);
    CHECK(session.allowances.covers(kReadKey));

    session.journal.clear();
    const CommandOutcome again = session.run(kReadKey);
    // No sandbox attempt and no question: straight to the host, from where the session is.
    CHECK(session.journal == Journal{std::string("rerun: ") + kReadKey});
    CHECK(again.ran_on_host);
    CHECK(again.decision == Decision::session_allowance);
    CHECK(again.output == "ssh-ed25519 AAAA key\n");
    CHECK(session.approver.reruns.back().cwd == kSubfolder);
    const std::vector<json>& before = session.approver.audit_at_rerun.back();
    REQUIRE_FALSE(before.empty());
    CHECK(before.back()["decision"] == "session_allowance");
    CHECK(before.back()["refusals"].empty());

    // Any other text asks again.
    session.journal.clear();
    session.approver.answer = Decision::deny;
    const CommandOutcome other = session.run(kTouchEtc);
    CHECK(session.journal ==
          Journal{std::string("sandbox: ") + kTouchEtc, std::string("ask: ") + kTouchEtc});
    CHECK_FALSE(other.ran_on_host);
    CHECK(other.decision == Decision::deny);
}

TEST_CASE("pipeline: a standing rule reruns its refused command outside without asking",
          "[command_pipeline]") {
    Session session;
    session.options.always_allow = {kReadKey};
    const CommandOutcome outcome = session.run(kReadKey);
    // The sandbox tries first; its refusal is answered by the rule, and the offer never shows.
    CHECK(session.journal ==
          Journal{std::string("sandbox: ") + kReadKey, std::string("rerun: ") + kReadKey});
    CHECK(session.approver.offers.empty());
    CHECK(outcome.ran_on_host);
    CHECK(outcome.decision == Decision::config_allowance);
    CHECK(outcome.output == "ssh-ed25519 AAAA key\n");
    CHECK(session.approver.reruns.back().cwd == kSubfolder);
    const std::vector<json>& before = session.approver.audit_at_rerun.back();
    REQUIRE(before.size() == 1);
    CHECK(before[0]["decision"] == "config_allowance");
    CHECK(before[0]["refusals"].size() == 1);
    CHECK(session.audit().back()["event"] == "rerun_finished");
    // It is no session allowance: the next run tries the sandbox again.
    CHECK_FALSE(session.allowances.covers(kReadKey));

    // Any other text gets the offer as usual, and a command nothing refused stays inside.
    session.journal.clear();
    CHECK_FALSE(session.run(kTouchEtc).ran_on_host);
    CHECK(session.journal ==
          Journal{std::string("sandbox: ") + kTouchEtc, std::string("ask: ") + kTouchEtc});
    session.options.always_allow.insert(kList);
    session.journal.clear();
    session.pipeline.reset();
    CHECK_FALSE(session.run(kList).ran_on_host);
    CHECK(session.journal == Journal{std::string("sandbox: ") + kList});
}

TEST_CASE("pipeline: a standing rule runs nothing outside when the audit log cannot be written",
          "[command_pipeline]") {
    Session session;
    const std::filesystem::path blocker = session.state.path() / "not-a-folder";
    std::ofstream(blocker) << "x";
    session.options.audit_path = (blocker / "audit.jsonl").string();
    session.options.always_allow = {kReadKey};
    const CommandOutcome outcome = session.run(kReadKey);
    check_sandboxed_result(outcome);
    CHECK(outcome.decision == Decision::deny);
    CHECK(session.journal == Journal{std::string("sandbox: ") + kReadKey});
}

TEST_CASE("pipeline: an allowance never reaches a command nobody may be asked about",
          "[command_pipeline]") {
    const CommandSource source = GENERATE(CommandSource::subagent, CommandSource::background);
    Session session;
    session.allowances.allow(kReadKey);
    const CommandOutcome outcome = session.run(kReadKey, source);
    check_sandboxed_result(outcome);
    CHECK(outcome.decision == Decision::nobody_to_ask);
    CHECK(session.approver.reruns.empty());
}

TEST_CASE("pipeline: when the audit log cannot be written, nothing runs outside",
          "[command_pipeline]") {
    struct Case {
        const char* name;
        Decision answer;
        bool allowance_held;
    };
    const Case cases[] = {
        {"Allow once", Decision::allow_once, false},
        {"Allow for session", Decision::allow_session, false},
        {"a session allowance", Decision::allow_once, true},
    };
    for (const Case& c : cases) {
        SECTION(c.name) {
            Session session;
            // A regular file where the log's folder should be: unwritable even for root.
            const std::filesystem::path blocker = session.state.path() / "not-a-folder";
            std::ofstream(blocker) << "x";
            session.options.audit_path = (blocker / "audit.jsonl").string();
            session.approver.answer = c.answer;
            if (c.allowance_held) session.allowances.allow(kReadKey);

            const CommandOutcome outcome = session.run(kReadKey);
            check_sandboxed_result(outcome);
            CHECK(outcome.decision == Decision::deny);
            CHECK(session.approver.reruns.empty());
            CHECK(session.allowances.covers(kReadKey) == c.allowance_held);
            CHECK(session.journal ==
                  Journal{std::string("sandbox: ") + kReadKey, std::string("ask: ") + kReadKey});
        }
    }
}

TEST_CASE(
    "pipeline: what the sandboxed attempt changed reaches the offer, the outcome and the "
    "audit line",
    "[command_pipeline]") {
    Session session;
    ChangeList changed{{{Change::Kind::created, kWorkspace + std::string("/a.txt"), "", false},
                        {Change::Kind::renamed, kWorkspace + std::string("/e.txt"),
                         kWorkspace + std::string("/d.txt"), false}},
                       2,
                       ""};
    session.sandbox.changes = changed;
    session.sandbox.journal_changes = true;
    const CommandOutcome outcome = session.run(kReadKey, CommandSource::user);
    // Recorded from before the sandboxed attempt to after it, and before anyone is asked.
    CHECK(session.journal == Journal{"changes: begin", std::string("sandbox: ") + kReadKey,
                                     "changes: end", std::string("ask: ") + kReadKey});
    REQUIRE(outcome.changed);
    CHECK(outcome.changed->count == 2);
    REQUIRE(session.approver.offers.size() == 1);
    const SandboxOffOffer& offer = session.approver.offers[0];
    REQUIRE(offer.changed);
    CHECK(offer.changed->kept.size() == 2);
    CHECK(offer.workspace == session.spec.policy.workspace);
    CHECK_THAT(offer_details(offer),
               Catch::Contains("The sandboxed attempt already changed 2 files in the workspace:\n"
                               "    created  a.txt\n"
                               "    renamed  d.txt -> e.txt\n"));
    const std::vector<json> audit = session.audit();
    REQUIRE(audit.size() == 1);
    CHECK(audit[0]["changed"] == 2);
    CHECK(audit[0]["changed_first"][1] ==
          std::string("renamed ") + kWorkspace + "/d.txt -> " + kWorkspace + "/e.txt");
    // Deny's result to the model keeps its usual form: the list is for the user.
    check_sandboxed_result(outcome);
}

TEST_CASE("pipeline: without --ask-sandbox-off nothing is recorded", "[command_pipeline]") {
    Session session;
    session.options.ask_sandbox_off = false;
    session.sandbox.journal_changes = true;
    const CommandOutcome outcome = session.run(kReadKey, CommandSource::user);
    CHECK_FALSE(outcome.changed);
    CHECK(session.journal == Journal{std::string("sandbox: ") + kReadKey});
}
