#include <gtest/gtest.h>
#include "symbolic/printer.h"
TEST(Smoke, Prints) { EXPECT_EQ(nt::to_python(nt::add(nt::var("a"), 1)), "a + 1"); }
