#include "sandbox/supervisor_protocol.h"

#include <catch2/catch.hpp>
#include <string>

using namespace caretz;

TEST_CASE("job reports survive the trip through a job_reply frame", "[supervisor]") {
    JobReport report;
    report.state = JobReport::State::killed;
    report.status = 15;
    report.output_head = std::string("head\0with nul\n", 14);
    report.output_tail = "tail\n";
    report.output_bytes = 123456789012ULL;
    auto back = decode_job_report(encode_job_report(report));
    REQUIRE(back);
    CHECK(back->state == JobReport::State::killed);
    CHECK(back->status == 15);
    CHECK(back->output_head == report.output_head);
    CHECK(back->output_tail == report.output_tail);
    CHECK(back->output_bytes == report.output_bytes);
}

TEST_CASE("job replies that are not reports decode to nothing", "[supervisor]") {
    CHECK_FALSE(decode_job_report(kJobUnknown));
    CHECK_FALSE(decode_job_report("9 0 0 0\n"));
    CHECK_FALSE(decode_job_report("0 0 10 50\nshort"));
}

TEST_CASE("payloads split at NUL bytes", "[supervisor]") {
    CHECK(split_payload(std::string("1\0/home/u\0echo a", 16)) ==
          std::vector<std::string>{"1", "/home/u", "echo a"});
    CHECK(split_payload("") == std::vector<std::string>{""});
}
