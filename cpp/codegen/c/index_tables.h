// Index tables: the integer arithmetic of one index variable of a nest, computed once per value
// of that variable before the nest instead of at every element.
//
// In: the Exprs a nest's body prints (offsets, masks), through tabulated(). Out: the same Exprs
// with each maximal part that divides and depends on one index variable alone replaced by a read
// of a table `nt_tab<n>[e]`; the tables' declarations and fill loops, as text for the emitter to
// write before the nest (end_nest()) or before the outermost enclosing loop statement that leaves
// the part unchanged (end_loop()).
//
// A 128 x 32 nest over an implicit GEMM's unravelled output positions divides 160 times, not
// 4096 times. Only parts that divide an index are tabulated: an affine part stays inline, where it
// keeps unit-stride loads intact. Nothing declared inside the nest (note_declared()) may appear in
// a tabulated part. Divisions not proved safe are guarded: the table holds 0 where a divisor is 0
// (the nest reads such a part only where its masks say so).
//
// Private tables (Mode::WorkItem) are filled by their work-item. Shared ones (Mode::WorkGroup: the
// element-by-element copies of a staged tensor-core operand, each work-item copying elements of
// many rows) are in work-group memory, filled by the work-group together between barriers; where a
// work-item's elements all have one index (NestTables::fixed), its entry is read once, into a
// register. The emitter (emitter_index_tables.cpp) decides which nests and loops get tables and
// writes the text this gives it.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "symbolic/expr.h"
#include "symbolic/simplify.h"

namespace nt::codegen {

class IndexTables {
 public:
  // What the tables need from the emitter that writes the nest.
  class Host {
   public:
    // A name no other emitted name has (the emitter tells note_declared() of it).
    virtual std::string fresh_name(const std::string& prefix) = 0;
    // What is known of the symbols the parts print (bounds of their variables); tables' reads are
    // added with their parts' bounds.
    virtual BoundsEnv& bounds() = 0;
    // Work-group memory for a shared table of `count` (C) entries of kIndexType, at most `bytes`.
    virtual void declare_shared_table(const std::string& name, const std::string& count, Expr bytes) = 0;
    // A private table of at most `bytes` bytes was declared.
    virtual void add_private_bytes(Expr bytes) = 0;

   protected:
    ~Host() = default;
  };

  // `shared`: tables in work-group memory (Mode::WorkGroup), else private.
  IndexTables(Host& host, bool shared) : host_(host), shared_(shared) {}

  // A nest of `shape` whose tables go before it, at `indent`; `extents` as C ("" where known only
  // at launch: no table for that dimension).
  void begin_nest(std::vector<Expr> shape, std::vector<std::string> extents, int indent);
  // Its tables (with barriers around them where shared) and the reads before it.
  std::string end_nest();
  bool in_nest() const { return nest_.has_value(); }
  // The nest's index variables as its loops declare them, outermost first; `complete` once all are.
  void add_index(const std::string& variable, bool complete);
  // Shared tables: where a work-item reads one entry of a dimension's tables at many of its
  // elements, it reads the entry once, into a register (NestTables::fixed).
  struct OnceRead {
    std::string test;        // C: where a work-item's elements all have `index` (else each reads its own)
    std::string index;       // C: that index, read before the nest; with `run`, the run's first
    int run = 1;             // > 1: the entries index + 0 .. run - 1, into an array read at `run_at`
    std::string run_at;      // C: an element's place in its run
    std::string run_length;  // C: where not `run`, the entries the array holds (at most `run`)
    bool per_copy = false;   // read at each copy of the nest's body from the element's own index
                             // (take_copy_reads()); `test` and `index` unused
  };
  // All of them at once; `fixed` per dimension (none where empty).
  void set_index(std::vector<std::string> index, std::vector<OnceRead> fixed = {});
  // The reads of per_copy dimensions' entries the nest's body asked for since the last call, as
  // statements for the start of a copy.
  std::vector<std::string> take_copy_reads();
  bool complete() const { return nest_ && nest_->complete; }
  const std::vector<std::string>& index() const { return nest_->index; }

  // A loop statement that tables may be hoisted before, at `indent`; end_loop(): their text.
  void begin_loop(int indent);
  std::string end_loop();

  // A name the emitter declared: inside the open nest and loops, no tabulated part may use it.
  void note_declared(const std::string& name);

  // `e` with its tabulable parts read from tables (made here when new), inside a complete nest.
  Expr tabulated(const Expr& e);

 private:
  struct TableScope {
    int indent = 0;                            // of the loop the tables go before
    std::set<std::string> inner;               // names declared inside it
    std::map<std::string, std::string> names;  // a part (its C over `nt_e`, the extent) -> its table
    std::string text;                          // the tables' declarations and loops
    bool barriers = false;                     // filled by the work-group: barriers around
  };
  struct NestTables : TableScope {
    std::vector<Expr> shape;           // the nest's shape
    std::vector<std::string> index;    // the nest's index variables, outermost first
    std::vector<std::string> extents;  // its extents as C ("" if known only at launch)
    bool complete = false;             // every index variable is declared
    // Shared tables, per dimension: where a work-item reads each table's entry once (OnceRead),
    // before the nest (`reads`) or at each copy (`copy_reads`), into `once`.
    std::vector<OnceRead> fixed;
    std::string reads;
    std::vector<std::string> copy_reads;
    std::map<std::string, std::string> once;
  };

  Expr table_of(const Expr& part, size_t dim);
  static std::string scope_text(const TableScope& scope);

  Host& host_;
  const bool shared_;
  std::optional<NestTables> nest_;
  std::vector<TableScope> loops_;  // the loop statements being emitted, outermost first
};

}  // namespace nt::codegen
