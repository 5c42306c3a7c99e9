// hipcub/hipcub.hpp: not provided by the rocmlint CPU executor (rocmlint verify --run).
#error "rocmlint executor: <hipcub/hipcub.hpp> is not provided: hipCUB cannot run on the CPU executor (docs/executor.md lists what it provides)"
