# Thin wrapper around CMake.  `make` builds into build/ (programs in
# build/bin/), `make test` runs the whole suite (plain build, then the
# ASan+UBSan build with the fuzz targets), `make demo` runs the demo.
# Missing Debian packages are installed first (apt-get when root, otherwise
# the exact command is printed and make stops).
#
#   make install [PREFIX=/usr] [DESTDIR=/tmp/root]   programs, library,
#        headers, pkg-config file, manual pages, systemd units, and
#        /etc/p2p/p2p.conf (never over an existing one); PREFIX is kept
#        by build/ for the next install
#   make uninstall [DESTDIR=...]   removes what the last install wrote
#   make deb        build-deb/p2pmpi_VERSION_ARCH.deb (prefix /usr)

JOBS    ?= 2
BUILD   ?= build
SANBUILD ?= build-asan
DEBBUILD ?= build-deb

# Everything the project needs from Debian, in one place.  scdoc renders
# the manual pages (docs/man); dpkg-dev (dpkg-shlibdeps) and file are what
# CPack needs for the .deb's dependencies; chromium (headless) is what the
# dashboard's page test renders it with.  libipsec-mb-dev (Intel's
# AES-GCM, proto/imb.h) exists for amd64 only; elsewhere libcrypto does it.
# Open MPI (openmpi-bin, libopenmpi-dev) is the reference the MPI test
# programs also run under (mpi.openmpi.N: they check the standard, not
# only our library).  gdb is how the integration tests say where a
# job that should have ended is stuck (harness.py, stacks).
DEBIAN_PACKAGES = cmake make gcc pkg-config python3 \
	libevent-dev libprotobuf-c-dev protobuf-c-compiler libsodium-dev libssl-dev \
	libhwloc-dev libinih-dev libjansson-dev uthash-dev \
	clang libclang-rt-14-dev iproute2 procps \
	scdoc dpkg-dev file chromium openmpi-bin libopenmpi-dev gdb \
	$(if $(filter amd64,$(shell dpkg --print-architecture 2>/dev/null)),libipsec-mb-dev)

.PHONY: all deps build test test-plain test-sanitize demo install uninstall deb clean fuzz

all: build

deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' \
			|| missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "installing:$$missing"; \
			export DEBIAN_FRONTEND=noninteractive; \
			apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null \
				|| { echo "apt-get failed"; exit 1; }; \
		else \
			echo "missing Debian packages; run:"; \
			echo "  sudo apt-get install -y$$missing"; \
			exit 1; \
		fi; \
	fi

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j$(JOBS)

$(SANBUILD)/CMakeCache.txt: | deps
	CC=clang cmake -S . -B $(SANBUILD) -DCMAKE_BUILD_TYPE=Debug -DP2P_SANITIZE=ON -DP2P_FUZZ=ON

test-plain: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) --timeout 300

test-sanitize: deps $(SANBUILD)/CMakeCache.txt
	cmake --build $(SANBUILD) -j$(JOBS)
	cd $(SANBUILD) && ctest --output-on-failure -j$(JOBS) --timeout 300

test: test-plain test-sanitize

demo: build
	@sh examples/demo.sh $(BUILD)/bin

# The prefix is set at configure time, so that everything derived from it
# agrees: the libdir (lib/x86_64-linux-gnu under /usr), /etc for /usr,
# the paths in the units.
install: deps $(BUILD)/CMakeCache.txt
	$(if $(PREFIX),cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null)
	cmake --build $(BUILD) -j$(JOBS)
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD)

uninstall:
	DESTDIR="$(DESTDIR)" cmake --build $(BUILD) --target uninstall

$(DEBBUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(DEBBUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_INSTALL_PREFIX=/usr -DBUILD_TESTING=OFF

deb: deps $(DEBBUILD)/CMakeCache.txt
	cmake --build $(DEBBUILD) -j$(JOBS)
	cd $(DEBBUILD) && cpack -G DEB
	@ls -l $(DEBBUILD)/*.deb

clean:
	rm -rf $(BUILD) $(SANBUILD) $(DEBBUILD)
