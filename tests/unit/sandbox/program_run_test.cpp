#include "sandbox/program_run.h"

#include <catch2/catch.hpp>

using namespace caretz;

TEST_CASE("a run's record reads back as it was written", "[program_run]") {
    const ProgramRun record{
        "sudo", "/home/u/my work", {"sudo", "-n", "systemctl", "restart", "nginx"}};
    const std::string line = encode_program_run(record);
    CHECK(line == "run 4:sudo,15:/home/u/my work,4:sudo,2:-n,9:systemctl,7:restart,5:nginx\n");
    CHECK(parse_program_runs(line + line) == std::vector<ProgramRun>{record, record});
    const ProgramRun kubectl{"kubectl", "/w", {"/usr/bin/kubectl", "get", "pods"}};
    CHECK(parse_program_runs(encode_program_run(kubectl)) == std::vector<ProgramRun>{kubectl});
}

TEST_CASE("an argument holding a whole fake record stays one argument", "[program_run]") {
    const ProgramRun record{"sudo", "/w", {"sudo", "x\nrun 3:git,2:/w,4:sudo,4:evil\n"}};
    const auto records = parse_program_runs(encode_program_run(record));
    REQUIRE(records.size() == 1);
    CHECK(records[0] == record);
}

TEST_CASE("records that do not parse are skipped, the ones after them kept", "[program_run]") {
    const ProgramRun good{"sudo", "/w", {"sudo", "true"}};
    for (const std::string& bad : std::vector<std::string>{
             "garbage\n", "run 4:sudo,99:/w,4:sudo\n", "run 4:sudo,2:/w\n", "run 4:sudo\n",
             "run 0:,2:/w,4:sudo\n", "run 4:sudo2:/w,4:sudo\n", "run 4:sudo,x:/w\n",
             "sudo 2:/w,4:sudo\n", "run 4:sudo,2:/w,4:sudo trailing\n",
             "run 4:sudo,2000:" + std::string(2000, 'a') + ",4:sudo\n"}) {
        CAPTURE(bad);
        CHECK(parse_program_runs(bad + encode_program_run(good)) == std::vector<ProgramRun>{good});
    }
    CHECK(parse_program_runs("run 4:sudo,2:/w,4:sudo").empty());  // cut short at the end
}

TEST_CASE("a record stays bounded whatever the program was given", "[program_run]") {
    ProgramRun huge{"git", std::string(5000, 'c'), {"git"}};
    for (int i = 0; i < 100; ++i) huge.argv.push_back(std::string(5000, 'a'));
    const std::string line = encode_program_run(huge);
    CHECK(line.size() < (kMaxRunRecordArgs + 2) * (kMaxRunRecordField + 8) + 8);
    const auto records = parse_program_runs(line);
    REQUIRE(records.size() == 1);
    CHECK(records[0].argv.size() == kMaxRunRecordArgs);
    CHECK(records[0].cwd.size() == kMaxRunRecordField);
    CHECK(records[0].cwd.ends_with("..."));
}

TEST_CASE("a record's command line reads like a shell's", "[program_run]") {
    CHECK(run_command_line({"sudo", "/w", {"sudo", "-n", "true"}}) == "sudo -n true");
    CHECK(run_command_line({"sudo", "/w", {"/usr/bin/sudo", "sh", "-c", "echo it's; rm -rf /"}}) ==
          "/usr/bin/sudo sh -c 'echo it'\\''s; rm -rf /'");
    CHECK(run_command_line({"sudo", "/w", {"sudo", ""}}) == "sudo ''");
}
