// Index tables (codegen/c/index_tables.h) on their own: which parts of a nest's Exprs become table
// reads, where the tables go, and the text that fills them, private and shared.
#include "codegen/c/index_tables.h"

#include <gtest/gtest.h>

#include "symbolic/printer.h"

namespace nt::codegen {
namespace {

// What an emitter gives the tables: fresh names (noted as declared), bounds, memory.
class FakeHost : public IndexTables::Host {
 public:
  explicit FakeHost(bool shared) : tables(*this, shared) {
    env.set("e0", 0, 63).set("e1", 0, 31).set("W", 1, std::nullopt);
  }
  std::string fresh_name(const std::string& prefix) override {
    std::string name = prefix + std::to_string(counter++);
    tables.note_declared(name);
    return name;
  }
  BoundsEnv& bounds() override { return env; }
  void declare_shared_table(const std::string& name, const std::string& count, Expr bytes) override {
    shared_tables.push_back(name + "[" + count + "] " + to_python(bytes));
  }
  void add_private_bytes(Expr bytes) override { private_bytes.push_back(to_python(bytes)); }

  IndexTables tables;
  BoundsEnv env;
  int counter = 0;
  std::vector<std::string> shared_tables, private_bytes;
};

Expr e0() { return var("e0"); }
Expr e1() { return var("e1"); }
Expr W() { return var("W"); }

// A nest over 64 x 32 whose loops declared e0, then e1.
void open_nest(IndexTables& tables) {
  tables.begin_nest({Expr(64), Expr(32)}, {"64", "32"}, 1);
  tables.add_index("e0", false);
  EXPECT_FALSE(tables.complete());
  tables.add_index("e1", true);
  EXPECT_TRUE(tables.complete());
}

TEST(IndexTables, DivisionsOfOneIndexBecomeOnePrivateTableBeforeTheNest) {
  FakeHost host(/*shared=*/false);
  open_nest(host.tables);
  // An unravelled row (e0 // W, e0 % W) times strides, plus the column: the row's parts are read
  // from tables, the column stays inline.
  Expr offset = add(add(mul(floordiv(e0(), W()), Expr(100)), mod(e0(), W())), e1());
  Expr read = host.tables.tabulated(offset);
  std::string printed = to_python(read);
  EXPECT_NE(printed.find("nt_tab0[e0]"), std::string::npos) << printed;
  EXPECT_NE(printed.find("e1"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("//"), std::string::npos) << printed;
  // The same part again: the same table.
  EXPECT_EQ(to_python(host.tables.tabulated(offset)), printed);
  std::string text = host.tables.end_nest();
  EXPECT_NE(text.find("  nt_index nt_tab0[64];\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  for (nt_index e0 = 0; e0 < 64; ++e0) nt_tab0[e0] = "), std::string::npos) << text;
  EXPECT_EQ(text.find("NT_BARRIER"), std::string::npos) << text;
  EXPECT_EQ(host.private_bytes, std::vector<std::string>{"512"});
  EXPECT_FALSE(host.tables.in_nest());
}

TEST(IndexTables, AffineMixedAndInnerPartsStayInline) {
  FakeHost host(/*shared=*/false);
  open_nest(host.tables);
  host.tables.note_declared("x");                        // declared inside the nest
  for (const Expr& e : {add(mul(e0(), Expr(3)), e1()),   // affine: unit-stride loads stay
                        floordiv(add(e0(), e1()), W()),  // two index variables
                        floordiv(add(e0(), var("x")), W())}) {
    EXPECT_EQ(to_python(host.tables.tabulated(e)), to_python(e));
  }
  EXPECT_EQ(host.tables.end_nest(), "");
}

TEST(IndexTables, APartALoopLeavesUnchangedGoesBeforeTheLoop) {
  FakeHost host(/*shared=*/false);
  host.tables.begin_loop(1);
  host.tables.note_declared("k");  // the loop's variable
  open_nest(host.tables);
  Expr outside = floordiv(e0(), W());                // the same in every iteration
  Expr inside = floordiv(add(e0(), var("k")), W());  // not
  host.tables.tabulated(outside);
  host.tables.tabulated(inside);
  std::string nest = host.tables.end_nest(), loop = host.tables.end_loop();
  EXPECT_NE(loop.find("nt_index nt_tab0[64];"), std::string::npos) << loop;
  EXPECT_NE(nest.find("k"), std::string::npos) << nest;
  EXPECT_EQ(loop.find("k"), std::string::npos) << loop;
}

TEST(IndexTables, UnprovedDivisorsAreGuarded) {
  FakeHost host(/*shared=*/false);
  host.env.set("V", std::nullopt, std::nullopt);  // may be 0
  open_nest(host.tables);
  host.tables.tabulated(floordiv(e0(), var("V")));
  std::string text = host.tables.end_nest();
  EXPECT_NE(text.find("((V) != 0) ? (nt_index)("), std::string::npos) << text;
}

TEST(IndexTables, SharedTablesAreFilledByTheWorkGroupBetweenBarriers) {
  FakeHost host(/*shared=*/true);
  host.tables.begin_nest({Expr(64), Expr(32)}, {"64", "32"}, 1);
  // Where the work-group is whole rows, a work-item's elements all have one column: its entry of a
  // column's table is read once, into a register.
  host.tables.set_index({"e0", "e1"}, {{}, {"nt_whole", "NT_LANE % 32"}});
  std::string row = to_python(host.tables.tabulated(floordiv(e0(), W())));
  std::string column = to_python(host.tables.tabulated(floordiv(e1(), W())));
  EXPECT_EQ(row, "nt_tab0[e0]");
  EXPECT_NE(column.find("nt_whole ? nt_tab1_2 : nt_tab1[e1]"), std::string::npos) << column;
  std::string text = host.tables.end_nest();
  EXPECT_EQ(text.find("  NT_BARRIER();\n"), 0u) << text;
  EXPECT_NE(text.find("for (nt_index e0 = NT_LANE; e0 < 64; e0 += NT_WORK_ITEMS) nt_tab0[e0] = "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  const nt_index nt_tab1_2 = nt_tab1[NT_LANE % 32];\n"), std::string::npos) << text;
  EXPECT_EQ(host.shared_tables, (std::vector<std::string>{"nt_tab0[64] 512", "nt_tab1[32] 256"}));
  EXPECT_TRUE(host.private_bytes.empty());
}

TEST(IndexTables, RunsReadTheirRowOnceACopyAndTheirColumnsOnceANest) {
  FakeHost host(/*shared=*/true);
  host.tables.begin_nest({Expr(64), Expr(32)}, {"64", "32"}, 1);
  // A gathered block copied in runs of 8 columns of a row: a row's entries at each copy, a run of
  // 8 column entries into an array before the nest, read at the element's place in its run.
  IndexTables::OnceRead row, columns{"nt_whole", "NT_LANE % 4 * 8", 8, "nt_place"};
  row.per_copy = true;
  host.tables.set_index({"e0", "e1"}, {row, columns});
  const Expr r = floordiv(e0(), W()), c = floordiv(e1(), W());
  EXPECT_EQ(to_python(host.tables.tabulated(r)), "nt_tab0_1");
  EXPECT_EQ(to_python(host.tables.tabulated(r)), "nt_tab0_1");  // one read a copy
  EXPECT_NE(to_python(host.tables.tabulated(c)).find("nt_whole ? nt_tab2_3[nt_place] : nt_tab2[e1]"),
            std::string::npos);
  EXPECT_EQ(host.tables.take_copy_reads(),
            std::vector<std::string>{"const nt_index nt_tab0_1 = nt_tab0[e0];"});
  EXPECT_TRUE(host.tables.take_copy_reads().empty());
  std::string text = host.tables.end_nest();
  EXPECT_NE(
      text.find(
          "  nt_index nt_tab2_3[8];\n  NT_UNROLL\n  for (int nt_r = 0; nt_r < 8; ++nt_r) nt_tab2_3[nt_r] = "
          "nt_tab2[NT_LANE % 4 * 8 + nt_r];\n"),
      std::string::npos)
      << text;
  EXPECT_EQ(text.find("nt_tab0_1"), std::string::npos) << text;  // not before the nest
}

}  // namespace
}  // namespace nt::codegen
