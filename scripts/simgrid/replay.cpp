/* icnlab's SimGrid TI replayer (used by run.sh): each rank replays its private trace file
 * (argv[1], as `smpirun -replay INDEX` passes it) with SMPI's own replay actions. */
#include "simgrid/s4u/Actor.hpp"
#include "smpi/smpi.h"
#include "xbt/replay.hpp"
#include <cstdlib>

int main(int argc, char* argv[])
{
  auto self                 = simgrid::s4u::Actor::self();
  const char* instance_id   = self->get_property("instance_id");
  const int rank            = std::atoi(self->get_property("rank"));
  const char* shared_trace  = self->get_property("tracefile");
  const char* private_trace = argc > 1 ? argv[1] : nullptr;
  smpi_replay_init(instance_id, rank, 0);
  if (shared_trace != nullptr)
    xbt_replay_set_tracefile(shared_trace);
  smpi_replay_main(rank, private_trace);
  return 0;
}
