#include "sandbox/sudo_record.h"

#include <catch2/catch.hpp>

using namespace caretz;

TEST_CASE("a sudo record reads back as it was written", "[sudo_record]") {
    const SudoRecord record{"/home/u/my work", {"sudo", "-n", "systemctl", "restart", "nginx"}};
    const std::string line = encode_sudo_record(record);
    CHECK(line == "sudo 15:/home/u/my work,4:sudo,2:-n,9:systemctl,7:restart,5:nginx\n");
    CHECK(parse_sudo_records(line + line) == std::vector<SudoRecord>{record, record});
}

TEST_CASE("an argument holding a whole fake record stays one argument", "[sudo_record]") {
    const SudoRecord record{"/w", {"sudo", "x\nsudo 2:/w,4:sudo,4:evil\n"}};
    const auto records = parse_sudo_records(encode_sudo_record(record));
    REQUIRE(records.size() == 1);
    CHECK(records[0] == record);
}

TEST_CASE("records that do not parse are skipped, the ones after them kept", "[sudo_record]") {
    const SudoRecord good{"/w", {"sudo", "true"}};
    for (const std::string& bad : std::vector<std::string>{
             "garbage\n", "sudo 99:/w,4:sudo\n", "sudo 2:/w\n", "sudo x:/w\n",
             "sudo 2:/w,4:sudo trailing\n", "sudo 2000:" + std::string(2000, 'a') + ",4:sudo\n"}) {
        CAPTURE(bad);
        CHECK(parse_sudo_records(bad + encode_sudo_record(good)) == std::vector<SudoRecord>{good});
    }
    CHECK(parse_sudo_records("sudo 2:/w,4:sudo").empty());  // cut short at the end
}

TEST_CASE("a record stays bounded whatever sudo was given", "[sudo_record]") {
    SudoRecord huge{std::string(5000, 'c'), {"sudo"}};
    for (int i = 0; i < 100; ++i) huge.argv.push_back(std::string(5000, 'a'));
    const std::string line = encode_sudo_record(huge);
    CHECK(line.size() < (kMaxSudoRecordArgs + 1) * (kMaxSudoRecordField + 8) + 8);
    const auto records = parse_sudo_records(line);
    REQUIRE(records.size() == 1);
    CHECK(records[0].argv.size() == kMaxSudoRecordArgs);
    CHECK(records[0].cwd.size() == kMaxSudoRecordField);
    CHECK(records[0].cwd.ends_with("..."));
}

TEST_CASE("a record's command line reads like a shell's", "[sudo_record]") {
    CHECK(sudo_command_line({"/w", {"sudo", "-n", "true"}}) == "sudo -n true");
    CHECK(sudo_command_line({"/w", {"/usr/bin/sudo", "sh", "-c", "echo it's; rm -rf /"}}) ==
          "/usr/bin/sudo sh -c 'echo it'\\''s; rm -rf /'");
    CHECK(sudo_command_line({"/w", {"sudo", ""}}) == "sudo ''");
}
