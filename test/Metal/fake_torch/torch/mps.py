"""torch.mps of the fake torch (see __init__): compile_shader records and,
when `execute` is true, runs the MSL on the CPU through the test shim."""

# Every compile_shader call: the source text.
compiled = []
# Every dispatch: dict(kernel=, args=, threads=, group_size=).
dispatches = []
# Run the kernels (False: only record).
execute = True


def is_available():
    return True


def synchronize():
    pass


class _KernelFunction:
    def __init__(self, library, name):
        self.library = library
        self.name = name

    def __call__(self, *args, threads=None, group_size=None):
        from . import Tensor
        if threads is None:
            raise TypeError("fake torch.mps: threads is required")
        threads = tuple(threads) if isinstance(threads, (tuple, list)) else (threads,)
        group = (tuple(group_size) if isinstance(group_size, (tuple, list))
                 else ((group_size,) if group_size else (1,)))
        if not (1 <= len(threads) <= 3 and len(group) == len(threads)):
            raise ValueError(f"fake torch.mps: threads {threads} and "
                             f"group_size {group} must have 1-3 equal ranks")
        for a in args:
            if isinstance(a, Tensor) and a.device.type != "mps":
                raise ValueError(f"fake torch.mps: tensor on {a.device}")
        dispatches.append({"kernel": self.name, "args": args,
                           "threads": threads, "group_size": group})
        if not execute:
            return
        if any(t % g for t, g in zip(threads, group)):
            raise ValueError("fake torch.mps: threads must be multiples of "
                             "group_size for the shim launcher")
        import shim_launch
        grid = tuple(t // g for t, g in zip(threads, group))
        grid += (1,) * (3 - len(grid))
        block = group + (1,) * (3 - len(group))
        buffers = [a._a for a in args if isinstance(a, Tensor)]
        if len(buffers) != len(args):
            raise ValueError("fake torch.mps: tile kernels take buffers only")
        shim_launch.run(self.library.source, self.name, buffers, grid, block)


class ShaderLibrary:
    def __init__(self, source):
        self.source = source

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if f"kernel void {name}(" not in self.source:
            raise AttributeError(f"fake torch.mps: no kernel '{name}' in the "
                                 "library")
        return _KernelFunction(self, name)


def compile_shader(source):
    if not isinstance(source, str):
        raise TypeError("compile_shader takes the source text")
    compiled.append(source)
    return ShaderLibrary(source)
