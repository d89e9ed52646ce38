# Adapted from the nbdev template, without `pkg_resources` (removed from current setuptools).
# Pins live in settings.ini; extras: srl, cnn, dev (dev = everything the tests need).
from configparser import ConfigParser
import setuptools, shlex

cfg = ConfigParser(delimiters=['='])
cfg.read('settings.ini', encoding='utf-8')
cfg = cfg['DEFAULT']

licenses = {'apache2': ('Apache Software License 2.0', 'OSI Approved :: Apache Software License')}
statuses = ['1 - Planning', '2 - Pre-Alpha', '3 - Alpha', '4 - Beta', '5 - Production/Stable', '6 - Mature', '7 - Inactive']
py_versions = '3.10 3.11 3.12 3.13'.split()

def reqs(key): return shlex.split(cfg.get(key, '').strip())

lic = licenses[cfg['license'].lower()]
min_python = cfg['min_python']
srl, cnn = reqs('srl_requirements'), reqs('cnn_requirements')
dev = reqs('dev_requirements') + srl + cnn

setuptools.setup(
    name=cfg['lib_name'],
    license=lic[0],
    classifiers=['Development Status :: ' + statuses[int(cfg['status'])],
                 'Intended Audience :: ' + cfg['audience'].title(),
                 'License :: ' + lic[1],
                 'Natural Language :: ' + cfg['language'].title()] +
                ['Programming Language :: Python :: ' + o for o in py_versions[py_versions.index(min_python):]],
    url=cfg['git_url'],
    packages=setuptools.find_packages(include=['vsr_cic', 'vsr_cic.*']),
    include_package_data=True,
    package_data={'vsr_cic': ['assets/*', 'assets/photo_models/*', 'assets/photo_models/*/*', 'assets/photo_models/*/*/*',
                             'assets/photo_models/*/*/*/*']},   # the PropBank lexicon and the learned SRL weights (see assets/NOTICE.md)
    install_requires=reqs('requirements'),
    extras_require={'srl': srl, 'cnn': cnn, 'dev': dev},
    python_requires='>=' + min_python,
    long_description=open('README.md', encoding='utf-8').read(),
    long_description_content_type='text/markdown',
    zip_safe=False,
    entry_points={'console_scripts': cfg.get('console_scripts', '').split(),
                  'nbdev': [f'{cfg["lib_path"]}={cfg["lib_path"]}._modidx:d']},
    version=cfg['version'],
    author=cfg['author'], author_email=cfg['author_email'],
    description=cfg['description'], keywords=cfg['keywords'],
)
