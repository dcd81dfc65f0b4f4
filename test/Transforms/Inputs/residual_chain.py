"""Prints a chain of N residual blocks (weight, linear, relu, add: 4 ops each),
the graph tandem-bench-placement's scale rows place, as tandem IR."""
import sys

blocks = int(sys.argv[1])
out = ["func.func @main(%x: tensor<1024x256xf32>) -> tensor<1024x256xf32> {"]
previous = "%x"
for i in range(blocks):
    out.append(f'  %w{i} = tandem.weight "b{i}.w" : tensor<256x256xf32>')
    out.append(f"  %l{i} = tandem.linear {previous}, %w{i} : "
               "(tensor<1024x256xf32>, tensor<256x256xf32>) -> "
               "tensor<1024x256xf32>")
    out.append(f"  %r{i} = tandem.relu %l{i} : tensor<1024x256xf32>")
    out.append(f"  %a{i} = tandem.add {previous}, %r{i} : tensor<1024x256xf32>")
    previous = f"%a{i}"
out.append(f"  return {previous} : tensor<1024x256xf32>")
out.append("}")
print("\n".join(out))
