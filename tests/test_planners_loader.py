"GSRL, S-level and R-level planners on real loader batches of the generated VSR world: the wiring, a short training, valid decodes"
import inspect
import pytest, torch
from vsr_cic.vsr import ROLE_VOCAB
from vsr_cic.gsrl import GSRL, gsrl_loss, ground
from vsr_cic.slevel import SLevelPlanner, SinkhornSLevel
from vsr_cic.rlevel import RLevelPlanner, rlevel_loss
from vsr_cic.planner import SemanticStructurePlanner

WORLD_IMAGES = 80   # small enough to generate in seconds
STEPS = 20          # optimisation steps per model (cycling over the train batches)


@pytest.fixture(autouse=True, scope='module')
def one_thread():
    "Tiny models: one intra-op thread is faster, and much faster when the CPU is shared (restored afterwards)"
    n = torch.get_num_threads(); torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope='module')
def world(tmp_path_factory):
    try:
        import vsr_cic.world as W
        from vsr_cic.data import load_dataset
        from vsr_cic.loader import build_vocabs
    except ImportError as e: pytest.skip(f"world / loader not exported yet ({e})")
    kw = {k: v for k, v in dict(n_images=WORLD_IMAGES, seed=0, render=False, n_workers=1).items()
          if k in inspect.signature(W.generate_world).parameters}
    ds = load_dataset(W.generate_world(tmp_path_factory.mktemp('world')/'world', **kw))
    return ds, build_vocabs(ds)


def batches(world, task, split='train', batch_size=16):
    from vsr_cic.loader import make_loader
    ds, voc = world
    return list(make_loader(ds, task, split, batch_size=batch_size, vocab=voc, dense=True, shuffle=False))


def train(model, lossf, bs, steps=STEPS, lr=3e-3):
    "A few Adam steps; returns the loss of the first batch before and after"
    torch.manual_seed(0)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.eval()
    with torch.no_grad(): before = lossf(model, bs[0]).item()
    model.train()
    for i in range(steps):
        loss = lossf(model, bs[i % len(bs)]); opt.zero_grad(); loss.backward(); opt.step()
    model.eval()
    with torch.no_grad(): after = lossf(model, bs[0]).item()
    return before, after


def test_gsrl(world):
    bs = batches(world, 'gsrl'); b = bs[0]
    D = b['set_feats'].shape[-1]
    m = GSRL(len(world[1]['verbs']), feat_dim=D, d_v=16, d_s=16, d_att=32, hidden=32)
    fwd = lambda m, b: m(b['verb'], b['role'], b['global_feat'], b['set_feats'], b['set_mask'])
    before, after = train(m, lambda m, b: gsrl_loss(fwd(m, b), b['target'], set_mask=b['set_mask']), bs)
    assert after < before
    with torch.no_grad(): sets = ground(fwd(m, b)[:, None], b['count'][:, None], b['set_mask'])[:, 0]   # (B, n)
    n_real = b['set_mask'].sum(1)
    assert ((sets < n_real[:, None]) | (sets == -1)).all() and (sets[:, 0] >= 0).all()


@pytest.mark.parametrize('cls', [SLevelPlanner, SinkhornSLevel])
def test_slevel(world, cls):
    bs = batches(world, 'slevel')
    kw = dict(d_model=32, n_heads=4, n_layers=1, ffn=64) if cls is SLevelPlanner else dict(d_model=32)
    m = cls(len(world[1]['verbs']), **kw)
    before, after = train(m, lambda m, b: m.loss(b['verb'], b['roles'], b['target']), bs)   # the loader's (B, M+1) targets
    assert after < before
    for b in batches(world, 'slevel', 'val')[:3]:
        seq = m.decode(b['verb'], b['roles'])[0][:, 0]                                       # (B, M)
        assert (seq.sort(-1).values == b['roles'].sort(-1).values).all(), 'decoded structure is not an ordering of the roles'


def rlevel_args(b):
    "The loader's dense R-level batch, cut to its real sizes, as RLevelPlanner arguments"
    n, R = int(b['item_mask'].sum(1).max()), int(b['region_mask'].sum(-1).max())
    return (b['regions'][:, :n, :R], b['region_mask'][:, :n, :R], b['region_boxes'][:, :n, :R], b['size'],
            b['region_cls_prob'][:, :n, :R], b['verb'], b['role'], b['item_mask'][:, :n]), n


def test_rlevel(world):
    bs = batches(world, 'rlevel')
    if not bs: pytest.skip('no role with two entities in this small world')
    C, D = bs[0]['region_cls_prob'].shape[-1], bs[0]['regions'].shape[-1]
    m = RLevelPlanner(len(world[1]['verbs']), n_classes=C, feat_dim=D, d_vis=16, d_cls=8, d_emb=8, hidden=32)
    def lossf(m, b):
        args, n = rlevel_args(b)
        return rlevel_loss(m(*args), b['perm'][:, :n], b['item_mask'][:, :n])
    before, after = train(m, lossf, bs)
    assert after < before
    args, n = rlevel_args(bs[0])
    order = m.decode(*args)                                                                 # (B, n)
    mask = bs[0]['item_mask'][:, :n]
    assert (order.masked_fill(~mask, n).sort(-1).values == torch.arange(n).masked_fill(~mask, n).sort(-1).values).all()


def test_planner_end_to_end(world):
    "Plan a val caption's VSR from its ground-truth grounding with untrained models: a valid structure over the right sets"
    ds, voc = world
    from vsr_cic.loader import frame_roles, frame_slots
    cap = next(c for c in ds.captions if ds.images[c['image_id']]['split'] == 'val' and c['frames']
               and all(s is not None for r, ss in frame_roles(c, 0).items() if r != 'V' for s in ss))
    grounding = {r: ss for r, ss in frame_roles(cap, 0).items() if r != 'V'}
    f = ds.features(cap['image_id']); img = ds.images[cap['image_id']]
    image = dict(features=torch.as_tensor(f['feats']), boxes=torch.as_tensor(f['boxes']), cls_prob=torch.as_tensor(f['cls_prob']),
                 size=(img['width'], img['height']), sets=img['sets'])
    nv, C, D = len(voc['verbs']), f['cls_prob'].shape[1], f['feats'].shape[1]
    ssp = SemanticStructurePlanner(SLevelPlanner(nv, d_model=16, n_heads=2, n_layers=1, ffn=32).eval(),
                                   RLevelPlanner(nv, n_classes=C, feat_dim=D, d_vis=8, d_cls=8, d_emb=8, hidden=16).eval())
    (structure, score), = ssp.plan(voc['verbs'][cap['frames'][0]['verb']], grounding, image)
    assert score <= 0
    assert sorted(sub for sub, _ in structure) == sorted(sub for sub, _ in frame_slots(cap, 0))
    assert sorted(st for _, st in structure if st is not None) == sorted(s for ss in grounding.values() for s in ss)
