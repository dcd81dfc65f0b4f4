"""Every ATen op the frontend lowers, in one module with one output per case,
compiled twice (all on the CPU; all on the sim GPU) and compared with
PyTorch. Prints one line per output: its ATen ops and its error."""
import math
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
sys.path.insert(0, os.path.dirname(__file__))
import tandem  # noqa: E402
from models import relative_error  # noqa: E402

TOLERANCE = 1e-5  # relative to the output's largest magnitude


def cases(x, img, ids, seq, vol):
    """(name, value) pairs; the names say which ATen ops they exercise."""
    y = x * 0.5 + 0.25
    q = seq.view(2, 8, 2, 8).transpose(1, 2)
    return [
        ("add/sub/mul/div/rsub with scalars", (x + 2) * 3 - x / 4 + (1 - x)),
        ("add alpha, sub alpha", torch.add(x, y, alpha=2) - torch.sub(x, y, alpha=3)),
        ("maximum/minimum/pow/reciprocal", torch.maximum(x, y) * torch.minimum(x, y)
         + torch.pow(x.abs() + 1, 1.5) + torch.reciprocal(x.abs() + 1) + x ** 2),
        ("neg/abs/exp/log/sqrt/rsqrt", -x.abs() + torch.exp(x / 4) + torch.log(x.abs() + 1)
         + torch.sqrt(x.abs()) + torch.rsqrt(x.abs() + 1)),
        ("tanh/sigmoid/relu/gelu/silu", torch.tanh(x) + torch.sigmoid(x) + F.relu(x)
         + F.gelu(x) + F.gelu(x, approximate="tanh") + F.silu(x)),
        # Integers are integral already: floor of an integer tensor is itself.
        # GELU written by hand, as models do.
        ("erf", 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))),
        ("floor/ceil/round/trunc", torch.floor(x * 4) + torch.ceil(x * 4)
         + torch.round(x * 4) + torch.trunc(x * 4)
         + torch.floor(ids).sum().float()),
        # Running sums: floats along either axis, and integers and booleans
        # widened to i64 as PyTorch does (positions from a mask).
        ("cumsum", torch.cumsum(x, 1) + x.cumsum(0) + x.cumsum(-1)
         + ids.cumsum(0).float().sum() + (x > 0).cumsum(1).float()),
        ("round with decimals", torch.round(x * 40, decimals=2)
         + torch.round(x * 400, decimals=-1) + torch.round(x, decimals=0)),
        ("hardtanh/relu6/clamp/hardsigmoid/hardswish/leaky_relu",
         F.hardtanh(x) + F.relu6(x * 4) + x.clamp(-0.5, 0.7) + x.clamp(min=0.1)
         + F.hardsigmoid(x) + F.hardswish(x) + F.leaky_relu(x, 0.2)),
        ("compare/where/masked_fill/logical", torch.where(x > y, x, y)
         + x.masked_fill(x < 0, -1.0)
         + ((x >= 0) & (y <= 0.5) | ~(x != y)).float()),
        ("cast to int and back", (x * 10).to(torch.int64).to(torch.float32)),
        ("sum/mean/amax/amin", x.sum(1, keepdim=True) + x.mean(0) + x.amax(1, keepdim=True)
         + x.amin(0)),
        ("max.dim values and argmax", x.max(dim=1).values + x.argmax(1).float()
         + x.argmax().float()),
        ("any/all", x.gt(1).any(1).float() + x.gt(-3).all(1).float()),
        ("softmax/log_softmax", F.softmax(x, dim=1) + F.log_softmax(x, dim=0)),
        ("layer_norm with and without affine", F.layer_norm(seq, (16,))
         + nn.functional.layer_norm(seq, (8, 16), torch.ones(8, 16) * 2)),
        ("normalize (vector norm)", F.normalize(x, dim=1)),
        ("view/reshape/flatten/unsqueeze/squeeze", x.view(4, 2, 8).flatten(1)
         .unsqueeze(0).squeeze(0).reshape(8, 8)),
        ("permute/transpose/t", x.t().contiguous() + x.transpose(0, 1)
         + x.permute(1, 0)),
        ("expand", x[:, :1].expand(8, 8) + x[:1].expand(8, 8)),
        ("slice with step/select", x[1:7:2, ::3].sum() + x[:, 2] .sum() + x[-1]),
        ("split/chunk/unbind/cat/stack", torch.cat(list(x.split(3, dim=1))[::-1], 1)
         + torch.stack(x.chunk(2, 0), 0).sum(0).repeat(2, 1) + torch.stack(
             x.unbind(1), 1)),
        ("mm/addmm/bmm/matmul/baddbmm", x @ y + torch.addmm(x, x, y, beta=0.5, alpha=2)
         + torch.bmm(x.view(2, 4, 8), y.view(2, 8, 4)).reshape(8, 4).repeat(1, 2)
         + torch.baddbmm(x.view(2, 4, 8)[:, :, :4], x.view(2, 4, 8),
                         y.view(2, 8, 4)).reshape(8, 4).repeat(1, 2)),
        ("linear on 3-D input", F.linear(seq, torch.ones(5, 16) * 0.1, torch.ones(5))),
        ("scaled_dot_product_attention causal and masked",
         F.scaled_dot_product_attention(q, q, q, is_causal=True)
         + F.scaled_dot_product_attention(q, q, q, attn_mask=torch.ones(8, 8).tril().bool())),
        ("conv2d strided/padded/dilated/grouped + bias",
         F.conv2d(img, torch.ones(4, 2, 3, 3) * 0.1, torch.ones(4), stride=2, padding=1,
                  dilation=1, groups=2)
         + F.conv2d(img, torch.ones(4, 4, 3, 3) * 0.05, None, stride=2, padding=2,
                    dilation=2)),
        ("conv1d", F.conv1d(seq, torch.ones(3, 8, 3) * 0.1, padding=1)),
        ("max_pool2d/avg_pool2d/adaptive_avg_pool2d",
         F.max_pool2d(img, 2) + F.avg_pool2d(img, 3, 2, 1)
         + F.adaptive_avg_pool2d(img, (4, 4))),
        ("adaptive_avg_pool2d to 1x1", F.adaptive_avg_pool2d(img, 1)),
        ("batch_norm (eval)", F.batch_norm(img, torch.zeros(4) + 0.1, torch.ones(4) * 2,
                                           torch.ones(4), torch.zeros(4), False)),
        ("embedding/index_select/index", F.embedding(ids, x) .sum(1)
         + x.index_select(0, ids[0]).sum(0) + x[ids[1]].sum(0)),
        ("arange/triu/tril/full/zeros_like/ones_like",
         torch.arange(8).float() * 0.5 + torch.triu(x, 1) + torch.tril(x, -1)
         + torch.full((8, 8), 0.25) + torch.zeros_like(x) + torch.ones_like(x)),
        ("new tensors in forward: scalar_tensor/where with scalars",
         torch.where(x > 0, 1.0, -1.0) * torch.tensor(3.0)),
        ("group_norm with and without affine",
         F.group_norm(img, 2, torch.arange(4.0), torch.ones(4)) + F.group_norm(img, 4)),
        ("constant_pad_nd (F.pad), positive and negative",
         F.pad(img, (1, 2, 0, 1))[:, :, :8, :8] + F.pad(img, (-1, 1), value=2.5)),
        ("flip/roll", x.flip(0) + x.flip((0, 1)) + x.roll(3, 1) + x.roll((2, -1), (0, 1))
         + x.roll(5)),
        ("var/std/var_mean", x.var(1) + x.std(0) + torch.var_mean(x, 1)[0]
         + x.var(0, unbiased=False) + torch.var_mean(x, 1, keepdim=True)[1].squeeze(1)),
        ("log1p/expm1/elu/softplus/mish/selu", torch.log1p(x.abs()) + torch.expm1(x / 4)
         + F.elu(x) + F.softplus(x) + F.mish(x) + F.selu(x)),
        ("max_pool2d with ceil_mode, slice_scatter",
         F.max_pool2d(img, 3, 2, ceil_mode=True).sum() + F.max_pool2d(img, 3, 2, 1, ceil_mode=True)[:, :, :4, :4]
         + torch.slice_scatter(img, img[:, :, 2:5] * 2, 2, 2, 5)[:, :, ::2, ::2]),
        ("bilinear upsampling, align_corners both ways",
         F.interpolate(img, scale_factor=2, mode="bilinear")[:, :, 3:11, 2:10]
         + F.interpolate(img[:, :, :5, :6], size=(8, 8), mode="bilinear", align_corners=True)),
        ("avg_pool2d: ceil_mode, count_include_pad=False, divisor_override",
         F.avg_pool2d(img, 3, 2, 1, ceil_mode=True)[:, :, :4, :4]
         + F.avg_pool2d(img, 3, 2, 1, count_include_pad=False)
         + F.avg_pool2d(img, 3, 2, 1, ceil_mode=True, count_include_pad=False)[:, :, :4, :4]
         + F.avg_pool2d(img, 2, divisor_override=3)),
        # Adaptive windows that do not tile the input overlap (PyTorch's
        # floor/ceil bounds), and a 1x1 input spreads to 7x7 (vgg on a
        # small image).
        ("adaptive_avg_pool2d to 3x5", F.adaptive_avg_pool2d(img, (3, 5))),
        ("adaptive_avg_pool2d to 7x7 and from 1x1",
         F.adaptive_avg_pool2d(img, (7, 7))
         + F.adaptive_avg_pool2d(img[:, :, :1, :1], (7, 7))),
        ("nearest upsampling", F.interpolate(img, scale_factor=2, mode="nearest")[:, :, ::2]
         + F.interpolate(img, size=(8, 16), mode="nearest")),
        # Instance norm arrives as batch norm over a [1, N·C, ...] view's own
        # statistics; training-mode batch norm on a batch of two moves the
        # batch behind the channels.
        ("instance_norm, batch_norm over batch statistics",
         F.instance_norm(torch.cat([img, img * 2 + 1]), weight=torch.arange(4.0) + 1,
                         bias=torch.ones(4))
         + F.instance_norm(torch.cat([img, -img]))
         + F.batch_norm(torch.cat([img, img * 3 - 1]), None, None, training=True)),
        # Negative integers: floor and truncation differ.
        ("integer floor division, remainder, fmod, div rounding modes",
         ((ids - 4) // 3 + (ids - 4) % -3 + torch.fmod(ids - 4, 3)
          + torch.div(ids - 4, -3, rounding_mode="trunc")
          + torch.div(ids - 4, ids + 1, rounding_mode="floor")
          + torch.remainder(ids * 7 - 20, -(ids + 1))).float()),
        # Kernel = stride (UNet's upsampling) is a GEMM and interleaved blocks;
        # the others, the convolution they are the gradient of.
        ("conv_transpose2d: kernel = stride, cropped by padding, + bias",
         F.conv_transpose2d(img, torch.arange(64.0).reshape(4, 4, 2, 2) / 64, torch.ones(4),
                            stride=2)
         + F.conv_transpose2d(img, torch.ones(4, 4, 2, 2) * 0.1, stride=2, padding=1,
                              output_padding=1)[:, :, :16, :16].sum()),
        ("conv_transpose2d: overlapping (DCGAN), output_padding, groups, dilation",
         F.conv_transpose2d(img, torch.arange(4 * 3 * 16.0).reshape(4, 3, 4, 4) / 100,
                            torch.arange(3.0), stride=2, padding=1)[:, :, :15, :15]
         + F.conv_transpose2d(img, torch.arange(4 * 2 * 9.0).reshape(4, 2, 3, 3) / 50,
                              stride=2, padding=1, output_padding=1, groups=2)[:, :1, :15, :15]
         + F.conv_transpose2d(img[:, :, :6, :6], torch.ones(4, 1, 3, 3) * 0.2, stride=(2, 3),
                              dilation=2, groups=4)[:, :1, :15, :15].sum()),
        ("conv_transpose1d", F.conv_transpose1d(seq, torch.arange(8 * 3 * 3.0).reshape(8, 3, 3)
                                                / 30, torch.ones(3), stride=2, padding=1)),
        # Several index tensors (CLIP's end-of-text pooling is x[arange, ids]):
        # adjacent axes keep their place, separated ones go first; negative
        # indices wrap; indices broadcast.
        ("advanced indexing with several index tensors",
         seq[torch.arange(2), ids[0, :2]].sum() + img[0, :, ids[0], ids[1] - 8].sum()
         + img[:, ids[0] % 4, :, ids[1]].sum(-1).sum(-1) + x[ids, ids[:1]].sum()
         + seq[ids[1, 1:] % 2, :, ids[0, :1] + 1].sum()),
        # Bags: 2-D ids (fixed bags), 1-D ids with offsets (an empty bag,
        # include_last_offset), per-sample weights, padding_idx.
        ("embedding_bag: sum/mean/max, offsets, weights, padding_idx",
         F.embedding_bag(ids, x, mode="mean").sum(0)
         + F.embedding_bag(ids.flatten(), x, torch.tensor([0, 2, 2]), mode="max").sum(0)
         + F.embedding_bag(ids.flatten(), x, torch.tensor([0, 1, 4, 6]), mode="sum",
                           per_sample_weights=x[0, :6], include_last_offset=True).sum(0)
         + F.embedding_bag(ids, x, padding_idx=3, mode="mean").sum(0)),
        # 3-D: a sum over depth taps of 2-D convolutions, pools per frame
        # then across each depth window.
        ("conv3d strided/padded/dilated/grouped + bias",
         F.conv3d(vol, torch.arange(4 * 2 * 27.0).reshape(4, 2, 3, 3, 3) / 200,
                  torch.arange(4.0), stride=(2, 1, 2), padding=1, groups=2)
         + F.conv3d(vol, torch.ones(4, 4, 2, 3, 1) * 0.05, None, stride=(2, 1, 2),
                    padding=(1, 2, 0), dilation=(2, 2, 1))),
        ("max_pool3d/avg_pool3d/adaptive_avg_pool3d",
         F.max_pool3d(vol, 2).sum((2, 3, 4)) + F.avg_pool3d(vol, 3, 2, 1).sum((2, 3, 4))
         + F.avg_pool3d(vol, (3, 2, 2), (2, 2, 2), (1, 0, 1),
                        count_include_pad=False).sum((2, 3, 4))
         + F.adaptive_avg_pool3d(vol, (3, 1, 3)).sum((2, 3, 4))
         + F.adaptive_avg_pool3d(vol, 1).sum((2, 3, 4))
         + F.max_pool3d(vol, 3, 2, 1).sum((2, 3, 4))),
        ("adaptive_avg_pool3d to 3x2x4", F.adaptive_avg_pool3d(vol, (3, 2, 4))),
        # Positions inside, between and outside the image: zeros and border
        # padding, both align_corners, bilinear and nearest.
        ("grid_sample bilinear/nearest, zeros/border, align_corners both ways",
         F.grid_sample(img, seq[:1, :6, :10].reshape(1, 6, 5, 2) * 1.3, align_corners=False)
         + F.grid_sample(img, seq[1:, :6, :10].reshape(1, 6, 5, 2) * 1.3, padding_mode="border",
                         align_corners=True)
         + F.grid_sample(img, seq[:1, 2:8, 6:].reshape(1, 6, 5, 2) * 0.9, mode="nearest",
                         align_corners=False)),
        ("affine_grid + grid_sample (a spatial transformer)",
         F.grid_sample(img, F.affine_grid(x[:2, :3].reshape(1, 2, 3) * 0.5 + torch.tensor(
             [[[0.8, 0.0, 0.0], [0.0, 0.8, 0.0]]]), (1, 4, 6, 6), align_corners=False),
                       align_corners=False)),
        # Distinct values (PyTorch leaves the order of ties open: Tandem's is
        # the first index), a NaN (the largest) and a -inf in every row,
        # the smallest too; integers' values.
        ("topk values and indices, largest and smallest, NaN, -inf",
         torch.cat([x.topk(3, dim=1)[0], x.topk(3, dim=1)[1].float(),
                    x.masked_fill(torch.arange(8) == 2, float("nan")).masked_fill(
                        torch.arange(8) == 5, -float("inf")).topk(8, dim=1)[1].float(),
                    x.topk(2, dim=0, largest=False)[0].t(),
                    x.topk(2, dim=0, largest=False)[1].t().float(),
                    ids.topk(2, dim=1)[0].float().repeat(4, 1)], 1)),
        # Routing: gates scattered into a dense [tokens, experts] matrix,
        # contributions added up, rows written by index or by mask.
        ("scatter/scatter_add/index_put",
         torch.zeros(8, 8).scatter(1, x.topk(2, dim=1)[1], x.topk(2, dim=1)[0].softmax(1))
         + x.scatter(0, ids[:, :2] % 8, y[:2, :2]).sum(0)
         + x.scatter(1, (ids * 3) % 8, 7.5)[:2, :].sum(0)
         + x.scatter_add(1, torch.cat([ids, 7 - ids], 1), y[:2, :6]).sum(0)
         + x.index_put((ids[0],), y[:3], accumulate=True)
         + x.index_put((ids[1] - 8,), torch.tensor(2.0))
         + x.index_put((x[:, 0] > 0,), torch.tensor(-1.0))),
        # Decompositions that arrive as advanced indexing and slice writes.
        ("bicubic upsampling, reflect/replicate/circular padding",
         F.interpolate(img, scale_factor=2, mode="bicubic")[:, :, :7, :7]
         + F.interpolate(img, size=(7, 7), mode="bicubic", align_corners=True)
         + F.pad(img, (1, 2, 2, 1), mode="reflect")[:, :, 2:9, 1:8]
         + F.pad(img, (1, 2, 2, 1), mode="replicate")[:, :, :7, :7]
         + F.pad(img, (1, 2, 0, 1), mode="circular")[:, :, 2:, :7]),
        # The smallest with NaN (last) and ±inf; no entries; argmin; isnan;
        # torch.gather along either axis.
        ("topk smallest with NaN, k = 0, argmin, isnan, gather",
         torch.cat([x.masked_fill(torch.arange(8) == 2, float("nan")).masked_fill(
             torch.arange(8) == 5, float("inf")).masked_fill(
             torch.arange(8) == 6, -float("inf")).topk(8, dim=1, largest=False)[1].float(),
                    x.topk(0, dim=1)[0], x.argmin(1, keepdim=True).float(),
                    ids.argmin(1).float().repeat(4).reshape(8, 1),
                    x.masked_fill(x > 1, float("nan")).isnan().float(),
                    x.gather(1, (ids.repeat(4, 1) * 3) % 8), x.gather(0, ids.repeat(1, 2)[:, :5]).repeat(4, 1)],
                   1)),
        ("float division rounded toward zero",
         torch.div(x * 4, 1.5, rounding_mode="trunc") + torch.div(x, y, rounding_mode="trunc")),
    ]


class Zoo(nn.Module):
    def forward(self, x, img, ids, seq, vol):
        return tuple(value for _, value in cases(x, img, ids, seq, vol))


torch.manual_seed(0)
inputs = (torch.randn(8, 8), torch.randn(1, 4, 8, 8),
          torch.randint(0, 8, (2, 3)), torch.randn(2, 8, 16), torch.randn(1, 4, 5, 6, 7))
names = [name for name, _ in cases(*inputs)]
with torch.no_grad():
    expected = Zoo()(*inputs)
failed = 0
for strategy in ("all-cpu", "all-gpu"):
    run = tandem.compile(Zoo(), inputs, strategy=strategy, backend="sim",
                         workdir=os.path.join(sys.argv[1], strategy))
    got = run(*inputs)
    for name, value, want in zip(names, got, expected):
        error = relative_error(value, want)
        ok = value.shape == want.shape and error <= TOLERANCE
        failed += not ok
        print(f"{strategy}: {name}: {error:.1e} {'ok' if ok else 'FAILED'}")
    run.close()
lowered = sorted({str(op) for op in run.aten_ops})
print(f"{len(lowered)} ATen ops lowered: {' '.join(lowered)}")
print(f"{2 * len(names) - failed} outputs ok, {failed} failed")
sys.exit(1 if failed else 0)
