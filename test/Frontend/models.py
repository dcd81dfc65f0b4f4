"""The models the frontend must handle (docs/frontend.md), at CI size, each with its
example inputs. Weights are PyTorch's default initialization under a fixed
seed; batch norm statistics are randomized so that eval-mode batch norm does
real work."""
import math

import torch
from torch import nn


def relative_error(got, want) -> float:
    """max |got - want| / max |want|, in double: what the frontend tests hold
    to their tolerances."""
    return ((got.double() - want.double()).abs().max() /
            want.double().abs().max().clamp_min(1e-30)).item()


def seeded(function):
    def build():
        torch.manual_seed(0)
        return function()
    build.__name__ = function.__name__
    build.__doc__ = function.__doc__
    return build


def randomize_batch_norm(model):
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.modules.batchnorm._BatchNorm):
                module.running_mean.uniform_(-0.2, 0.2)
                module.running_var.uniform_(0.5, 1.5)
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.2, 0.2)
    return model


@seeded
def mlp():
    """The 13→16→32→1 regression MLP of user story 3, batch 506."""
    model = nn.Sequential(nn.Linear(13, 16), nn.ReLU(), nn.Linear(16, 32),
                          nn.ReLU(), nn.Linear(32, 1))
    return model, (torch.randn(506, 13),)


@seeded
def resnet18():
    import torchvision
    model = randomize_batch_norm(torchvision.models.resnet18(num_classes=100))
    return model, (torch.randn(2, 3, 64, 64),)


@seeded
def mobilenet_v2():
    """Depthwise (grouped) convolutions and ReLU6."""
    import torchvision
    model = randomize_batch_norm(torchvision.models.mobilenet_v2(num_classes=100))
    return model, (torch.randn(2, 3, 64, 64),)


@seeded
def transformer_encoder():
    model = nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024,
                                       batch_first=True, dropout=0.1)
    return model, (torch.randn(8, 64, 256),)


class CausalSelfAttention(nn.Module):
    def __init__(self, width, heads, context):
        super().__init__()
        self.heads = heads
        self.c_attn = nn.Linear(width, 3 * width)
        self.c_proj = nn.Linear(width, width)
        self.register_buffer("bias", torch.tril(torch.ones(context, context))
                             .view(1, 1, context, context))

    def forward(self, x):
        batch, length, width = x.shape
        q, k, v = self.c_attn(x).split(width, dim=2)
        head = width // self.heads
        q = q.view(batch, length, self.heads, head).transpose(1, 2)
        k = k.view(batch, length, self.heads, head).transpose(1, 2)
        v = v.view(batch, length, self.heads, head).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(head))
        scores = scores.masked_fill(self.bias[:, :, :length, :length] == 0,
                                    float("-inf"))
        y = torch.softmax(scores, dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(batch, length, width)
        return self.c_proj(y)


class GPT2Block(nn.Module):
    """A GPT-2 decoder block (nanoGPT's): pre-norm, causal self-attention
    with a masked_fill causal mask, a GELU (tanh) MLP."""

    def __init__(self, width=128, heads=4, context=64):
        super().__init__()
        self.ln_1 = nn.LayerNorm(width)
        self.attn = CausalSelfAttention(width, heads, context)
        self.ln_2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width),
                                 nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * width, width))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2(nn.Module):
    """Token and position embeddings, two blocks, the tied LM head."""

    def __init__(self, vocabulary=1024, width=256, context=64, layers=2):
        super().__init__()
        self.wte = nn.Embedding(vocabulary, width)
        self.wpe = nn.Embedding(context, width)
        self.blocks = nn.ModuleList(GPT2Block(width, 4, context)
                                    for _ in range(layers))
        self.ln_f = nn.LayerNorm(width)
        self.lm_head = nn.Linear(width, vocabulary, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, ids):
        positions = torch.arange(ids.shape[1], device=ids.device)
        x = self.wte(ids) + self.wpe(positions)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


@seeded
def gpt2():
    return GPT2(), (torch.randint(0, 1024, (4, 64)),)


class DLRM(nn.Module):
    """DLRM-style: a bottom MLP over dense features, one large embedding
    table per sparse feature (sum-pooled bags of ids), pairwise dot-product
    interactions, a top MLP, a click probability."""

    def __init__(self, dense=13, tables=(200000, 50000, 1000), width=32):
        super().__init__()
        self.bottom = nn.Sequential(nn.Linear(dense, 512), nn.ReLU(),
                                    nn.Linear(512, 256), nn.ReLU(),
                                    nn.Linear(256, width), nn.ReLU())
        self.embeddings = nn.ModuleList(nn.Embedding(rows, width)
                                        for rows in tables)
        features = len(tables) + 1
        pairs = features * (features - 1) // 2
        self.top = nn.Sequential(nn.Linear(width + pairs, 512), nn.ReLU(),
                                 nn.Linear(512, 256), nn.ReLU(),
                                 nn.Linear(256, 1))
        rows, cols = torch.triu_indices(features, features, offset=1)
        self.register_buffer("pair_index", rows * features + cols,
                             persistent=False)

    def forward(self, dense, sparse):
        x = self.bottom(dense)
        pooled = [table(sparse[:, k]).sum(dim=1)
                  for k, table in enumerate(self.embeddings)]
        features = torch.stack([x] + pooled, dim=1)
        interactions = torch.bmm(features, features.transpose(1, 2))
        flat = interactions.flatten(1)[:, self.pair_index]
        return torch.sigmoid(self.top(torch.cat([x, flat], dim=1)))


@seeded
def dlrm():
    model = DLRM()
    batch = 1024
    return model, (torch.randn(batch, 13),
                   torch.randint(0, 1000, (batch, 3, 8)))


def conv_block(inputs, outputs):
    return nn.Sequential(nn.Conv2d(inputs, outputs, 3, padding=1), nn.BatchNorm2d(outputs),
                         nn.ReLU(), nn.Conv2d(outputs, outputs, 3, padding=1),
                         nn.BatchNorm2d(outputs), nn.ReLU())


class UNet(nn.Module):
    """A two-level UNet: max-pooled encoder, decoder upsampling by learned
    2x2 transposed convolutions, skip connections concatenated."""

    def __init__(self, channels=3, classes=2, width=16):
        super().__init__()
        self.down1 = conv_block(channels, width)
        self.down2 = conv_block(width, 2 * width)
        self.middle = conv_block(2 * width, 4 * width)
        self.up2 = nn.ConvTranspose2d(4 * width, 2 * width, 2, stride=2)
        self.dec2 = conv_block(4 * width, 2 * width)
        self.up1 = nn.ConvTranspose2d(2 * width, width, 2, stride=2)
        self.dec1 = conv_block(2 * width, width)
        self.head = nn.Conv2d(width, classes, 1)

    def forward(self, x):
        skip1 = self.down1(x)
        skip2 = self.down2(nn.functional.max_pool2d(skip1, 2))
        x = self.middle(nn.functional.max_pool2d(skip2, 2))
        x = self.dec2(torch.cat([self.up2(x), skip2], dim=1))
        x = self.dec1(torch.cat([self.up1(x), skip1], dim=1))
        return self.head(x)


@seeded
def unet():
    return randomize_batch_norm(UNet()), (torch.randn(2, 3, 64, 64),)


class StyleNet(nn.Module):
    """Johnson-style image transformation: strided convolutions, instance
    norm (affine), residual blocks, upsampling by 3x3 stride-2 transposed
    convolutions with output_padding, tanh."""

    def __init__(self, width=16):
        super().__init__()

        def layer(conv, channels):
            return nn.Sequential(conv, nn.InstanceNorm2d(channels, affine=True),
                                 nn.ReLU())
        self.encode = nn.Sequential(
            layer(nn.Conv2d(3, width, 9, padding=4), width),
            layer(nn.Conv2d(width, 2 * width, 3, stride=2, padding=1), 2 * width),
            layer(nn.Conv2d(2 * width, 4 * width, 3, stride=2, padding=1), 4 * width))
        self.residual = nn.ModuleList(
            nn.Sequential(layer(nn.Conv2d(4 * width, 4 * width, 3, padding=1), 4 * width),
                          nn.Conv2d(4 * width, 4 * width, 3, padding=1),
                          nn.InstanceNorm2d(4 * width, affine=True))
            for _ in range(2))
        self.decode = nn.Sequential(
            layer(nn.ConvTranspose2d(4 * width, 2 * width, 3, stride=2, padding=1,
                                     output_padding=1), 2 * width),
            layer(nn.ConvTranspose2d(2 * width, width, 3, stride=2, padding=1,
                                     output_padding=1), width),
            nn.Conv2d(width, 3, 9, padding=4), nn.Tanh())

    def forward(self, x):
        x = self.encode(x)
        for block in self.residual:
            x = x + block(x)
        return self.decode(x)


@seeded
def style_net():
    model = StyleNet()
    with torch.no_grad():  # instance norm's affine parameters start at 1 and 0
        for module in model.modules():
            if isinstance(module, nn.InstanceNorm2d):
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.2, 0.2)
    return model, (torch.randn(1, 3, 64, 64),)


class ClipBlock(nn.Module):
    """A pre-norm transformer block with causal attention and GELU."""

    def __init__(self, width, heads=4):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                 nn.Linear(4 * width, width))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(c, dim=-1)
        q, k, v = (y.view(b, t, self.heads, c // self.heads).transpose(1, 2)
                   for y in (q, k, v))
        attended = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.out(attended.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp(self.norm2(x))


class ClipText(nn.Module):
    """CLIP's text tower: token and position embeddings, causal transformer
    blocks, a final layer norm, the features at each sequence's end-of-text
    token (the largest id: x[arange(B), ids.argmax(-1)]), a projection."""

    def __init__(self, vocabulary=1000, width=128, length=32, layers=2):
        super().__init__()
        self.tokens = nn.Embedding(vocabulary, width)
        self.positions = nn.Parameter(torch.randn(length, width) * 0.01)
        self.blocks = nn.Sequential(*(ClipBlock(width) for _ in range(layers)))
        self.norm = nn.LayerNorm(width)
        self.projection = nn.Linear(width, 64, bias=False)

    def forward(self, ids):
        x = self.norm(self.blocks(self.tokens(ids) + self.positions))
        ends = x[torch.arange(x.shape[0]), ids.argmax(dim=-1)]
        return self.projection(ends)


@seeded
def clip_text():
    return ClipText(), (torch.randint(0, 1000, (4, 32)),)


class BagRecommender(nn.Module):
    """The standard recommender lookup: nn.EmbeddingBag tables over bags of
    ids of varying length (1-D ids and their offsets, as the data loader
    gives them), sum and mean pooled, into an MLP with the dense features."""

    def __init__(self, dense=13, tables=(100000, 20000), width=32):
        super().__init__()
        self.bags = nn.ModuleList(nn.EmbeddingBag(rows, width, mode=mode)
                                  for rows, mode in zip(tables, ("sum", "mean")))
        self.bottom = nn.Sequential(nn.Linear(dense, 512), nn.ReLU(),
                                    nn.Linear(512, width), nn.ReLU())
        self.top = nn.Sequential(nn.Linear(width * (len(tables) + 1), 512), nn.ReLU(),
                                 nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 1))

    def forward(self, dense, ids0, offsets0, ids1, offsets1):
        pooled = [bag(ids, offsets) for bag, ids, offsets in
                  zip(self.bags, (ids0, ids1), (offsets0, offsets1))]
        return torch.sigmoid(self.top(torch.cat([self.bottom(dense)] + pooled, 1)))


def bag_offsets(batch, total, generator):
    """Bag starts for `total` ids in `batch` bags of uneven length (some
    empty)."""
    cuts = torch.randint(0, total + 1, (batch - 1,), generator=generator).sort().values
    return torch.cat([torch.zeros(1, dtype=torch.int64), cuts])


@seeded
def bag_recommender():
    model = BagRecommender()
    generator = torch.Generator().manual_seed(1)
    batch = 2048
    return model, (torch.randn(batch, 13),
                   torch.randint(0, 100000, (16000,), generator=generator),
                   bag_offsets(batch, 16000, generator),
                   torch.randint(0, 20000, (6000,), generator=generator),
                   bag_offsets(batch, 6000, generator))


class MixtureOfExperts(nn.Module):
    """A transformer block's feed-forward as a top-2 mixture of experts:
    a router's two best experts per token (topk), their gates softmaxed and
    scattered into a dense [tokens, experts] matrix, each expert's output
    weighted by its column."""

    def __init__(self, width=128, experts=8, hidden=256):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.router = nn.Linear(width, experts, bias=False)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(width, hidden), nn.GELU(), nn.Linear(hidden, width))
            for _ in range(experts))

    def forward(self, x):
        tokens = self.norm(x).reshape(-1, x.shape[-1])
        weights, chosen = self.router(tokens).topk(2, dim=-1)
        gates = torch.zeros(tokens.shape[0], len(self.experts)).scatter(
            1, chosen, weights.softmax(dim=-1))
        mixed = sum(gates[:, k:k + 1] * expert(tokens)
                    for k, expert in enumerate(self.experts))
        return x + mixed.reshape(x.shape)


@seeded
def moe():
    return MixtureOfExperts(), (torch.randn(4, 64, 128),)


@seeded
def r3d_18():
    """torchvision's video ResNet: 3-D convolutions and batch norm over
    clips, 8 frames of 32 x 32."""
    import torchvision
    model = randomize_batch_norm(torchvision.models.video.r3d_18(num_classes=10))
    return model, (torch.randn(1, 3, 8, 32, 32),)


class RMSNorm(nn.Module):
    """LLaMA's and T5's normalization, as Hugging Face writes it: the root
    mean square of the last dimension, no mean subtracted, a learned scale."""

    def __init__(self, width, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(width))

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


class LlamaBlock(nn.Module):
    """A LLaMA-style decoder block: RMSNorm before causal attention
    (scaled_dot_product_attention, no biases) and before a SwiGLU MLP."""

    def __init__(self, width, heads, hidden):
        super().__init__()
        self.heads = heads
        self.norm_1 = RMSNorm(width)
        self.qkv = nn.Linear(width, 3 * width, bias=False)
        self.out = nn.Linear(width, width, bias=False)
        self.norm_2 = RMSNorm(width)
        self.gate = nn.Linear(width, hidden, bias=False)
        self.up = nn.Linear(width, hidden, bias=False)
        self.down = nn.Linear(hidden, width, bias=False)

    def forward(self, x):
        batch, length, width = x.shape
        q, k, v = (z.view(batch, length, self.heads, -1).transpose(1, 2)
                   for z in self.qkv(self.norm_1(x)).split(width, dim=2))
        y = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.out(y.transpose(1, 2).reshape(batch, length, width))
        h = self.norm_2(x)
        return x + self.down(nn.functional.silu(self.gate(h)) * self.up(h))


class Llama(nn.Module):
    """Token embeddings, two LLaMA-style blocks, a final RMSNorm and the
    LM head."""

    def __init__(self, vocabulary=1024, width=128, heads=4, hidden=344,
                 layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocabulary, width)
        self.blocks = nn.ModuleList(LlamaBlock(width, heads, hidden)
                                    for _ in range(layers))
        self.norm = RMSNorm(width)
        self.lm_head = nn.Linear(width, vocabulary, bias=False)

    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.norm(x))


@seeded
def llama():
    return Llama(), (torch.randint(0, 1024, (2, 64)),)


MODELS = {f.__name__: f for f in (mlp, resnet18, mobilenet_v2,
                                  transformer_encoder, gpt2, dlrm, unet,
                                  style_net, clip_text, bag_recommender, r3d_18,
                                  moe, llama)}
